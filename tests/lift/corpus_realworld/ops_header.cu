// A program that keeps its kernel and `__device__` helpers in a header beside it
// (`#include "ops.cuh"`): the header's `#ifndef OPS_LEAK` default is overridden here before the
// include, `OPS_THREADS` keeps the header's default, and a second kernel in this file calls one of
// the header's helpers.
#include <cstdio>
#include <cuda_runtime.h>

#define OPS_LEAK 0.2f
#include "ops.cuh"

#define FEATURES 64
#define COUNT 4096

__global__ void leakyOnly(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = leakyRelu(in[i]);
}

int main()
{
    float *x, *w, *b, *y, *z;
    cudaMalloc(&x, FEATURES * COUNT * sizeof(float));
    cudaMalloc(&w, FEATURES * sizeof(float));
    cudaMalloc(&b, FEATURES * sizeof(float));
    cudaMalloc(&y, FEATURES * COUNT * sizeof(float));
    cudaMalloc(&z, FEATURES * COUNT * sizeof(float));
    cudaMemset(x, 0, FEATURES * COUNT * sizeof(float));
    cudaMemset(w, 0, FEATURES * sizeof(float));
    cudaMemset(b, 0, FEATURES * sizeof(float));

    dim3 grid(COUNT / OPS_THREADS, FEATURES);
    affineLeaky<<<grid, OPS_THREADS>>>(x, w, b, y, COUNT, FEATURES);
    leakyOnly<<<(FEATURES * COUNT + 255) / 256, 256>>>(y, z, FEATURES * COUNT);
    cudaDeviceSynchronize();
    printf("done\n");
    cudaFree(x);
    cudaFree(w);
    cudaFree(b);
    cudaFree(y);
    cudaFree(z);
    return 0;
}
