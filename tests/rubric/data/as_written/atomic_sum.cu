// A sum through atomicAdd on one element: not lifted (atomics), a partial rubric.
// A textbook kernel for the rubric of the program as written (tests/rubric/test_rubric_as_written.cpp).
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define N (1 << 20)

__global__ void atomic_sum(const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(&y[0], x[i]);
}

int main()
{
    float *hX = (float *)malloc(sizeof(float) * (N));
    for (int i = 0; i < (N); ++i) hX[i] = (float)(i % 17);
    float *dX, *dY;
    cudaMalloc(&dX, sizeof(float) * (N));
    cudaMalloc(&dY, sizeof(float) * (1));
    cudaMemcpy(dX, hX, sizeof(float) * (N), cudaMemcpyHostToDevice);
    atomic_sum<<<N / 256, 256>>>(dX, dY, N);
    float *hY = (float *)malloc(sizeof(float) * (1));
    cudaMemcpy(hY, dY, sizeof(float) * (1), cudaMemcpyDeviceToHost);
    printf("%f\n", hY[0]);
    cudaFree(dX);
    cudaFree(dY);
    free(hX);
    free(hY);
    return 0;
}
