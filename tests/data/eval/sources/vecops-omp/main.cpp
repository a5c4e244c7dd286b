// Test fixture for roofcast evaluate: OpenMP offload regions written for the test suite.
#include <cstdio>
#include <cstdlib>

void saxpy(int n, float a, const float *x, float *y)
{
  #pragma omp target teams distribute parallel for map(to: x[0:n]) map(tofrom: y[0:n])
  for (int i = 0; i < n; i++)
    y[i] = a * x[i] + y[i];
}

template <typename T>
void scale(T *v, T factor, int n)
{
  #pragma omp target teams distribute parallel for map(tofrom: v[0:n])
  for (int i = 0; i < n; i++)
    v[i] = v[i] * factor;
}

struct Grid {
  int n;
  double *cells;
  void relax(double w);
};

void Grid::relax(double w)
{
  double *c = cells;
  #pragma omp target teams distribute parallel for map(tofrom: c[0:n])
  for (int i = 1; i < n - 1; i++)
    c[i] = w * (c[i - 1] + c[i + 1]);
}

int main(int argc, char **argv)
{
  int n = argc > 1 ? atoi(argv[1]) : 1024;
  float *x = (float *)malloc(n * sizeof(float));
  float *y = (float *)malloc(n * sizeof(float));
  double *d = (double *)malloc(n * sizeof(double));
  for (int i = 0; i < n; i++) { x[i] = 1.0f; y[i] = 2.0f; d[i] = 3.0; }
  saxpy(n, 2.0f, x, y);
  scale<float>(y, 0.5f, n);
  #pragma omp target teams distribute parallel for map(tofrom: d[0:n])
  for (int i = 0; i < n; i++)
    d[i] = d[i] + 1.0;
  Grid g{n, d};
  g.relax(0.5);
  printf("%f %f\n", y[0], d[0]);
  free(x); free(y); free(d);
  return 0;
}
