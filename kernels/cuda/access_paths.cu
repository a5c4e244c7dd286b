// Access paths beyond a plain subscript: members through a pointer, shared memory handed out
// by a helper, vector types named through a class template, and work inside class methods.

struct Point2 {
  float x;
  float y;
};

__global__ void arrow_sum(const Point2 *pts, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    const Point2 *p = pts + i;
    out[i] = p->x + p->y;
  }
}

__global__ void arrow_update(Point2 *pts, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    Point2 *p = &pts[i];
    p->x = p->y * 2.0f;
    (*p).y = 0.5f;
  }
}

template <class T> struct DynShared {
  __device__ operator T *() {
    extern __shared__ unsigned char dyn_bytes[];
    return reinterpret_cast<T *>(dyn_bytes);
  }
};

__device__ float *float_scratch() {
  extern __shared__ float dyn_floats[];
  return dyn_floats;
}

template <class T> __global__ void pair_sums(const T *in, T *out) {
  T *buf = DynShared<T>();
  unsigned t = threadIdx.x;
  unsigned i = blockIdx.x * blockDim.x + t;
  buf[t] = in[i];
  __syncthreads();
  out[i] = buf[t] + buf[t ^ 1];
}

__global__ void scratch_reverse(const float *in, float *out, float a) {
  float *s = float_scratch();
  int t = threadIdx.x;
  s[t] = a * in[blockIdx.x * blockDim.x + t];
  __syncthreads();
  out[blockIdx.x * blockDim.x + t] = s[blockDim.x - 1 - t];
}

template <typename T> struct lanes4;
template <> struct lanes4<float> {
  typedef float4 type;
};
template <> struct lanes4<double> {
  typedef double4 type;
};

template <typename T>
__global__ void dot4(const typename lanes4<T>::type *a, const typename lanes4<T>::type *b,
                     T *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  typename lanes4<T>::type u = a[i];
  typename lanes4<T>::type v = b[i];
  out[i] = u.x * v.x + u.y * v.y + u.z * v.z + u.w * v.w;
}

struct Body {
  float pos;
  float vel;
  __device__ float kinetic() const { return 0.5f * vel * vel; }
  __device__ void advance(float dt) { pos += vel * dt; }
};

__global__ void advance_bodies(Body *bodies, float *energy, float dt, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    energy[i] = bodies[i].kinetic();
    bodies[i].advance(dt);
  }
}

template <typename T> struct Strided {
  const T *base;
  int stride;
  __device__ T at(int k) const { return this->base[k * stride]; }
  __device__ T pair(int k) const { return at(k) + base[k * stride + 1]; }
};

template <typename T> __global__ void gather_pairs(Strided<T> src, T *dst, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = src.pair(i);
}

template <typename T> struct Cube {
  __device__ T operator()(T v) const { return v * v * v; }
};

template <typename T, typename Op> __global__ void map_op(const T *x, T *y, Op op, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = op(x[i]);
}

template __global__ void pair_sums<float>(const float *, float *);
template __global__ void dot4<double>(const double4 *, const double4 *, double *);
template __global__ void gather_pairs<double>(Strided<double>, double *, int);
template __global__ void map_op<double, Cube<double>>(const double *, double *, Cube<double>,
                                                      int);
