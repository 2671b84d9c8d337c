// Grid-stride loops as the "CUDA Pro Tip" write-ups recommend them: each thread walks the array
// with `i += blockDim.x * gridDim.x`, and the kernels are launched with a fixed number of blocks
// (a multiple of a typical SM count) that does not depend on the problem size.
#include <cstdio>
#include <cuda_runtime.h>

#define N (1 << 22)
#define NUM_BLOCKS 160
#define THREADS 256

__global__ void saxpyStride(int n, float a, const float *x, float *y)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        y[i] = a * x[i] + y[i];
}

__global__ void squareDiff(const float *a, const float *b, float *out, int n)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    int stride = blockDim.x * gridDim.x;
    for (int i = idx; i < n; i += stride) {
        float d = a[i] - b[i];
        out[i] = d * d;
    }
}

int main()
{
    float *x, *y, *d2;
    cudaMalloc(&x, N * sizeof(float));
    cudaMalloc(&y, N * sizeof(float));
    cudaMalloc(&d2, N * sizeof(float));
    cudaMemset(x, 0, N * sizeof(float));
    cudaMemset(y, 0, N * sizeof(float));
    saxpyStride<<<NUM_BLOCKS, THREADS>>>(N, 2.0f, x, y);
    squareDiff<<<NUM_BLOCKS, THREADS>>>(x, y, d2, N);
    cudaDeviceSynchronize();
    printf("done\n");
    cudaFree(x);
    cudaFree(y);
    cudaFree(d2);
    return 0;
}
