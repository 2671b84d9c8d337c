// Naive transpose: reads rows (coalesced), writes columns (each lane a different row).
// A textbook kernel for the rubric of the program as written (tests/rubric/test_rubric_as_written.cpp).
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define N 1024

__global__ void transpose_naive(const float *in, float *out, int n)
{
    int x = blockIdx.x * 32 + threadIdx.x;
    int y = blockIdx.y * 8 + threadIdx.y;
    if (x < n && y < n)
        out[x * n + y] = in[y * n + x];
}

int main()
{
    float *hX = (float *)malloc(sizeof(float) * (N * N));
    for (int i = 0; i < (N * N); ++i) hX[i] = (float)(i % 17);
    float *dX, *dY;
    cudaMalloc(&dX, sizeof(float) * (N * N));
    cudaMalloc(&dY, sizeof(float) * (N * N));
    cudaMemcpy(dX, hX, sizeof(float) * (N * N), cudaMemcpyHostToDevice);
    dim3 block(32, 8);
    dim3 grid(N / 32, N / 8);
    transpose_naive<<<grid, block>>>(dX, dY, N);
    float *hY = (float *)malloc(sizeof(float) * (N * N));
    cudaMemcpy(hY, dY, sizeof(float) * (N * N), cudaMemcpyDeviceToHost);
    printf("%f\n", hY[0]);
    cudaFree(dX);
    cudaFree(dY);
    free(hX);
    free(hY);
    return 0;
}
