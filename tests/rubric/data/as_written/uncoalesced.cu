// y = 2x through a transposing index: the 32 lanes of a warp are n/32 elements apart.
// A textbook kernel for the rubric of the program as written (tests/rubric/test_rubric_as_written.cpp).
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define N (1 << 20)

__global__ void scale(const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[(i % 32) * (n / 32) + i / 32] = 2.0f * x[(i % 32) * (n / 32) + i / 32];
}

int main()
{
    float *hX = (float *)malloc(sizeof(float) * (N));
    for (int i = 0; i < (N); ++i) hX[i] = (float)(i % 17);
    float *dX, *dY;
    cudaMalloc(&dX, sizeof(float) * (N));
    cudaMalloc(&dY, sizeof(float) * (N));
    cudaMemcpy(dX, hX, sizeof(float) * (N), cudaMemcpyHostToDevice);
    scale<<<N / 256, 256>>>(dX, dY, N);
    float *hY = (float *)malloc(sizeof(float) * (N));
    cudaMemcpy(hY, dY, sizeof(float) * (N), cudaMemcpyDeviceToHost);
    printf("%f\n", hY[0]);
    cudaFree(dX);
    cudaFree(dY);
    free(hX);
    free(hY);
    return 0;
}
