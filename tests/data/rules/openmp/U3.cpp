// U3: a target region without a work-shared loop counts its body once; a plain target
// region is one unit of work.
void u3_serial(float* a) {
#pragma omp target map(tofrom: a[0:1])
  {
    a[0] = a[0] + 1.0f;
  }
}
