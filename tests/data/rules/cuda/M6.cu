// M6: p->m and (*p).m with p pointing into global memory are accesses to a member of p[0].
struct Pt {
  float x;
  float y;
  double w;
};

__global__ void m6_arrow(const Pt* pts, float* out) {
  int i = threadIdx.x;
  const Pt* p = pts + i;
  out[i] = p->x + (*p).y;
}
