// Histogram of integer keys with an atomic update per key.

void histogram_omp(const int* keys, int* bins, int n, int nbins)
{
#pragma omp target teams distribute parallel for map(to: keys[0:n]) map(tofrom: bins[0:nbins])
    for (int i = 0; i < n; ++i) {
        int b = keys[i] % nbins;
#pragma omp atomic
        bins[b] += 1;
    }
}
