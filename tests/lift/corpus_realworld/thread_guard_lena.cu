// Element-wise kernels whose guards compare a thread index with a length (`threadIdx.x < lenA)`),
// the other comparison tree-sitter-cuda 0.20 read as a template argument list.
#include <cstdio>
#include <cuda_runtime.h>

#define LEN_A 4096

__global__ void scaleA(const float *A, float *out, float s, int lenA)
{
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (threadIdx.x < blockDim.x && t < lenA)
        out[t] = A[t] * s;
}

__global__ void shiftA(const float *A, float *out, int lenA)
{
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < lenA && (t > 0))
        out[t] = A[t] - A[t - 1];
}

int main()
{
    float *A, *scaled, *diff;
    cudaMalloc(&A, LEN_A * sizeof(float));
    cudaMalloc(&scaled, LEN_A * sizeof(float));
    cudaMalloc(&diff, LEN_A * sizeof(float));
    cudaMemset(A, 0, LEN_A * sizeof(float));
    scaleA<<<LEN_A / 128, 128>>>(A, scaled, 0.5f, LEN_A);
    shiftA<<<LEN_A / 128, 128>>>(scaled, diff, LEN_A);
    cudaDeviceSynchronize();
    cudaFree(A);
    cudaFree(scaled);
    cudaFree(diff);
    return 0;
}
