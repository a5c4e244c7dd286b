// One Jacobi sweep of the 2D Laplace equation in double precision over the interior of an
// nx x ny grid (x fastest); the two loops are collapsed into one iteration space.

void omp_jacobi2d(int nx, int ny, const double* u, double* v)
{
#pragma omp target teams distribute parallel for collapse(2) map(to: u[0:nx*ny]) map(tofrom: v[0:nx*ny])
    for (int y = 1; y < ny - 1; ++y)
        for (int x = 1; x < nx - 1; ++x)
            v[y * nx + x] = 0.25 * (u[y * nx + x - 1] + u[y * nx + x + 1]
                                    + u[(y - 1) * nx + x] + u[(y + 1) * nx + x]);
}
