// A kernel with a typo: `sum` is declared as `acc`.
__global__ void dot(const float *a, const float *b, float *out, int n)
{
    float acc = 0.0f;
    for (int i = 0; i < sum; ++i)
        acc += a[i] * b[i];
    out[0] = acc;
}
