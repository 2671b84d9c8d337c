// Kernels over element types other than float: double precision, integers, half precision with
// the cuda_fp16.h intrinsics, mixed precision (half in, float out), and 8-bit pixels, which the
// graph has no type for.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#define N 65536

__global__ void axpyDouble(const double *x, double *y, double a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i];
}

__global__ void histogramFree(const int *keys, int *shifted, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        shifted[i] = keys[i] * 2 + 1;
}

__global__ void scaleHalf(const __half *x, __half *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = __hmul(x[i], __float2half(0.5f));
}

__global__ void widenHalf(const __half *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = __half2float(x[i]) * 4.0f;
}

__global__ void normalizePixels(const unsigned char *pixels, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = pixels[i] / 255.0f;
}

int main()
{
    double *x, *y;
    int *keys, *shifted;
    __half *hx, *hy;
    float *wide, *norm;
    unsigned char *pixels;
    cudaMalloc(&x, N * sizeof(double));
    cudaMalloc(&y, N * sizeof(double));
    cudaMalloc(&keys, N * sizeof(int));
    cudaMalloc(&shifted, N * sizeof(int));
    cudaMalloc(&hx, N * sizeof(__half));
    cudaMalloc(&hy, N * sizeof(__half));
    cudaMalloc(&wide, N * sizeof(float));
    cudaMalloc(&norm, N * sizeof(float));
    cudaMalloc(&pixels, N * sizeof(unsigned char));
    cudaMemset(x, 0, N * sizeof(double));
    cudaMemset(y, 0, N * sizeof(double));
    cudaMemset(keys, 0, N * sizeof(int));
    cudaMemset(hx, 0, N * sizeof(__half));
    cudaMemset(pixels, 0, N * sizeof(unsigned char));
    axpyDouble<<<N / 256, 256>>>(x, y, 2.0, N);
    histogramFree<<<N / 256, 256>>>(keys, shifted, N);
    scaleHalf<<<N / 256, 256>>>(hx, hy, N);
    widenHalf<<<N / 256, 256>>>(hx, wide, N);
    normalizePixels<<<N / 256, 256>>>(pixels, norm, N);
    cudaDeviceSynchronize();
    return 0;
}
