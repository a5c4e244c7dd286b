// A1: an asynchronous copy loads its source and stores its destination; a size that cannot
// be evaluated counts 4 bytes, with a note.
__global__ void a1_copy(const float* src) {
  __shared__ float buf[128];
  int t = threadIdx.x;
  __pipeline_memcpy_async(&buf[t], &src[t], sizeof(float2));
  __pipeline_commit();
}

__global__ void a1_unknown_size(const float* src, const int* sizes) {
  __shared__ float buf[128];
  int t = threadIdx.x;
  __pipeline_memcpy_async(&buf[t], &src[t], sizes[t]);
  __pipeline_commit();
}
