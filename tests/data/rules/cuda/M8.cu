// M8: a type named through a class takes the specialisation's typedef; a cast has the type
// it names.
template <typename T> struct Vec { typedef T Type; };
template <> struct Vec<float> { typedef float4 Type; };

template <typename T>
__global__ void m8_types(const T* in, T* out) {
  int i = threadIdx.x;
  typedef typename Vec<T>::Type V;
  const V* vin = reinterpret_cast<const V*>(in);
  V* vout = reinterpret_cast<V*>(out);
  vout[i] = vin[i];
}
