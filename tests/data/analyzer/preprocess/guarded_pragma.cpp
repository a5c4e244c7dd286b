// Fixture for tests/test_preprocess.py (our own code).
// A target pragma guarded by #ifdef (kept with -D USE_GPU) applies to the loop after #endif.
void guarded(const float* x, float* y, int n)
{
#ifdef USE_GPU
  #pragma omp target teams distribute parallel for map(to: x[0:n]) map(from: y[0:n])
#endif
  for (int i = 0; i < n; i++) {
    y[i] = x[i] * 3.0f;
  }
}

void guarded_else(const float* x, float* y, int n)
{
#if defined(_OPENMP) && defined(OFFLOAD)
  /* the offload arm comes first */
  #pragma omp target teams distribute parallel for
#else
  #pragma omp parallel for
#endif
  for (int i = 0; i < n; i++) {
    y[i] = x[i] + 1.0f;
  }
}
