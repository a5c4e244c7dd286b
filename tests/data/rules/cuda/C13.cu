// C13: `do { ... } while (0)`, a statement-like macro's body, runs once.
#define ADD_TO(s, v) do { (s) += (v); } while (0)
__global__ void c13_do_while_zero(float* y, int n) {
  float s = 0.0f;
  for (int i = 0; i < n; i++) {
    ADD_TO(s, 1.0f);
  }
  y[threadIdx.x] = s;
}
