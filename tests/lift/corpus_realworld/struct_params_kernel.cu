// A kernel that takes its parameters in a struct passed by value (its fields are set on the host),
// next to the same computation with plain parameters; both call a __device__ helper.
#include <cuda_runtime.h>

#define N 4096

struct AxpbyParams {
    float alpha;
    float beta;
    int n;
};

__device__ float axpbyOne(float a, float x, float b, float y)
{
    return a * x + b * y;
}

__global__ void axpby(AxpbyParams p, const float *x, float *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < p.n)
        y[i] = axpbyOne(p.alpha, x[i], p.beta, y[i]);
}

__global__ void axpbyPlain(float alpha, const float *x, float beta, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = axpbyOne(alpha, x[i], beta, y[i]);
}

int main()
{
    float *x, *y;
    cudaMalloc(&x, N * sizeof(float));
    cudaMalloc(&y, N * sizeof(float));
    cudaMemset(x, 0, N * sizeof(float));
    cudaMemset(y, 0, N * sizeof(float));
    AxpbyParams p;
    p.alpha = 2.0f;
    p.beta = 0.5f;
    p.n = N;
    axpbyPlain<<<N / 256, 256>>>(2.0f, x, 0.5f, y, N);
    axpby<<<N / 256, 256>>>(p, x, y);
    cudaDeviceSynchronize();
    return 0;
}
