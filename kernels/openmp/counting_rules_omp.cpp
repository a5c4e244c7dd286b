// OpenMP regions that pin down counting rules: a private array is not memory traffic, a
// pragma continued over two lines is named by its first line, and a template function's
// region follows its type parameter.

void private_buffer(const float* in, float* out, int n)
{
#pragma omp target teams distribute parallel for map(to: in[0:n*4]) map(from: out[0:n])
    for (int i = 0; i < n; ++i) {
        float tmp[4];
        for (int k = 0; k < 4; ++k)
            tmp[k] = in[i * 4 + k] * 2.0f;
        out[i] = tmp[0] + tmp[1] + tmp[2] + tmp[3];
    }
}

void axpy_continued(double a, const double* x, double* y, int n)
{
#pragma omp target teams distribute parallel for \
    map(to: x[0:n]) map(tofrom: y[0:n])
    for (int i = 0; i < n; ++i)
        y[i] += a * x[i];
}

template <typename T>
void scale_template(T* v, T s, int n)
{
#pragma omp target teams distribute parallel for map(tofrom: v[0:n])
    for (int i = 0; i < n; ++i)
        v[i] = v[i] * s + s;
}

template void scale_template<double>(double*, double, int);
