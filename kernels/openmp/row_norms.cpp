// Euclidean norm of every row: teams take rows, the threads of a team reduce one row.
#include <cmath>

void row_norms(const double* A, double* norms, int rows, int cols)
{
#pragma omp target teams distribute map(to: A[0:rows*cols]) map(from: norms[0:rows])
    for (int r = 0; r < rows; ++r) {
        double s = 0.0;
#pragma omp parallel for reduction(+: s)
        for (int c = 0; c < cols; ++c)
            s += A[r * cols + c] * A[r * cols + c];
        norms[r] = sqrt(s);
    }
}
