// y[i] = x[2i]: a stride-2 read, a contiguous write.
// A textbook kernel for the rubric of the program as written (tests/rubric/test_rubric_as_written.cpp).
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define N (1 << 20)

__global__ void strided(const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = x[2 * i];
}

int main()
{
    float *hX = (float *)malloc(sizeof(float) * (2 * N));
    for (int i = 0; i < (2 * N); ++i) hX[i] = (float)(i % 17);
    float *dX, *dY;
    cudaMalloc(&dX, sizeof(float) * (2 * N));
    cudaMalloc(&dY, sizeof(float) * (N));
    cudaMemcpy(dX, hX, sizeof(float) * (2 * N), cudaMemcpyHostToDevice);
    strided<<<N / 256, 256>>>(dX, dY, N);
    float *hY = (float *)malloc(sizeof(float) * (N));
    cudaMemcpy(hY, dY, sizeof(float) * (N), cudaMemcpyDeviceToHost);
    printf("%f\n", hY[0]);
    cudaFree(dX);
    cudaFree(dY);
    free(hX);
    free(hY);
    return 0;
}
