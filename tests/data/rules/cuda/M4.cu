// M4: element sizes from declared and vector types; a member access counts the member.
__global__ void m4_sizes(const float4* a, const double2* b, float4* out) {
  int i = threadIdx.x;
  float4 v = a[i];
  v.x += (float)b[i].y;
  out[i] = v;
}
