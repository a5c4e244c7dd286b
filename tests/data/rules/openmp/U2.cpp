// U2: one iteration of the work-shared loop nest is the unit of work.
void u2_scale(const float* a, float* b, int n) {
#pragma omp target teams distribute parallel for map(to: a[0:n]) map(from: b[0:n])
  for (int i = 0; i < n; i++) {
    b[i] = a[i] * 3.0f;
  }
}
