// Double-precision 5-point averaging sweep over the interior of an nx x ny grid.

void jacobi_dp(const double* u, double* unew, int nx, int ny)
{
#pragma omp target teams distribute parallel for collapse(2) map(to: u[0:nx*ny]) map(tofrom: unew[0:nx*ny])
    for (int y = 1; y < ny - 1; ++y) {
        for (int x = 1; x < nx - 1; ++x) {
            int c = y * nx + x;
            unew[c] = 0.2 * (u[c] + u[c - 1] + u[c + 1] + u[c - nx] + u[c + nx]);
        }
    }
}
