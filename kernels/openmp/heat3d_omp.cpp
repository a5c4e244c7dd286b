// Explicit 3D heat step, 7-point stencil, all three loops collapsed.

void heat3d_omp(const float* t, float* tn, int nx, int ny, int nz, float alpha)
{
#pragma omp target teams distribute parallel for collapse(3) map(to: t[0:nx*ny*nz]) map(tofrom: tn[0:nx*ny*nz])
    for (int k = 1; k < nz - 1; ++k) {
        for (int j = 1; j < ny - 1; ++j) {
            for (int i = 1; i < nx - 1; ++i) {
                int c = (k * ny + j) * nx + i;
                tn[c] = t[c] + alpha * (t[c - 1] + t[c + 1] + t[c - nx] + t[c + nx]
                                        + t[c - nx * ny] + t[c + nx * ny] - 6.0f * t[c]);
            }
        }
    }
}
