// Host code that includes its kernels from a header ("header_kernels.cuh", beside it) and sets the
// block size the header defaults to, as a project's build would with -DHK_BLOCK=128.
#include <cstdio>
#include <cuda_runtime.h>

#define HK_BLOCK 128
#include "header_kernels.cuh"

#define ROWS 4096
#define COLS 1024

int main()
{
    float *x, *bias, *y;
    cudaMalloc(&x, ROWS * COLS * sizeof(float));
    cudaMalloc(&bias, COLS * sizeof(float));
    cudaMalloc(&y, ROWS * COLS * sizeof(float));
    cudaMemset(x, 0, ROWS * COLS * sizeof(float));
    cudaMemset(bias, 0, COLS * sizeof(float));
    dim3 grid(COLS / HK_BLOCK, ROWS);
    biasGelu<<<grid, HK_BLOCK>>>(x, bias, y, ROWS, COLS);
    cudaDeviceSynchronize();
    printf("done\n");
    cudaFree(x);
    cudaFree(bias);
    cudaFree(y);
    return 0;
}
