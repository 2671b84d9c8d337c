// A precision switch as numerical codes write it (`#if defined(USE_DOUBLE)` choosing the
// `real_t` typedef, float unless the build defines it) and `extern "C"` launchers, so that C,
// Fortran or ctypes can call them; a small main drives the launchers as a self-test.
#include <cstdio>
#include <cuda_runtime.h>

#if defined(USE_DOUBLE)
typedef double real_t;
#define REAL_ONE 1.0
#else
typedef float real_t;
#define REAL_ONE 1.0f
#endif

#define NPTS 100000
#define BLOCK 128

__global__ void axpbyReal(real_t a, const real_t *x, real_t b, real_t *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + b * y[i];
}

__global__ void reciprocal(const real_t *x, real_t *r, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        r[i] = REAL_ONE / (x[i] + REAL_ONE);
}

extern "C" void launch_axpby(real_t a, const real_t *x, real_t b, real_t *y, int n)
{
    axpbyReal<<<(n + BLOCK - 1) / BLOCK, BLOCK>>>(a, x, b, y, n);
}

extern "C" {
void launch_reciprocal(const real_t *x, real_t *r, int n)
{
    reciprocal<<<(n + BLOCK - 1) / BLOCK, BLOCK>>>(x, r, n);
}
}

int main()
{
    real_t *x, *y, *r;
    cudaMalloc(&x, NPTS * sizeof(real_t));
    cudaMalloc(&y, NPTS * sizeof(real_t));
    cudaMalloc(&r, NPTS * sizeof(real_t));
    cudaMemset(x, 0, NPTS * sizeof(real_t));
    cudaMemset(y, 0, NPTS * sizeof(real_t));
    launch_axpby(2.0, x, 0.5, y, NPTS);
    launch_reciprocal(y, r, NPTS);
    cudaDeviceSynchronize();
    printf("real_t has %zu bytes\n", sizeof(real_t));
    cudaFree(x);
    cudaFree(y);
    cudaFree(r);
    return 0;
}
