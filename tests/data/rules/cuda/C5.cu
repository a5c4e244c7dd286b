// C5: elements are told apart by their index's tokens, not its spelling.
__global__ void c5_tokens(const float* x, float* y) {
  int i = threadIdx.x;
  y[i] = x[i+1] + x[i + 1] + x[ i+1 ];
}
