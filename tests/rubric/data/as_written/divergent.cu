// A branch on threadIdx.x parity: both paths run in every warp, each with half the lanes.
// A textbook kernel for the rubric of the program as written (tests/rubric/test_rubric_as_written.cpp).
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define N (1 << 20)

__global__ void parity(const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        if (threadIdx.x % 2 == 0)
            y[i] = 2.0f * x[i];
        else
            y[i] = x[i] + 1.0f;
    }
}

int main()
{
    float *hX = (float *)malloc(sizeof(float) * (N));
    for (int i = 0; i < (N); ++i) hX[i] = (float)(i % 17);
    float *dX, *dY;
    cudaMalloc(&dX, sizeof(float) * (N));
    cudaMalloc(&dY, sizeof(float) * (N));
    cudaMemcpy(dX, hX, sizeof(float) * (N), cudaMemcpyHostToDevice);
    parity<<<N / 256, 256>>>(dX, dY, N);
    float *hY = (float *)malloc(sizeof(float) * (N));
    cudaMemcpy(hY, dY, sizeof(float) * (N), cudaMemcpyDeviceToHost);
    printf("%f\n", hY[0]);
    cudaFree(dX);
    cudaFree(dY);
    free(hX);
    free(hY);
    return 0;
}
