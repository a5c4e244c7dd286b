// M7: a method called on an object in global memory is inlined; its data member is an
// access to that object's member.
struct Acc {
  float v;
  __device__ float twice() const { return v * 2.0f; }
};

__global__ void m7_method(const Acc* acc, float* out) {
  int i = threadIdx.x;
  out[i] = acc[i].twice();
}
