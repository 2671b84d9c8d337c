// Block sums through a shared-memory tree (Harris reduction #2): the tree is not lifted.
// A textbook kernel for the rubric of the program as written (tests/rubric/test_rubric_as_written.cpp).
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define N (1 << 20)

__global__ void block_sum(const float *x, float *y, int n)
{
    __shared__ float buf[256];
    int tid = threadIdx.x;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    buf[tid] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s)
            buf[tid] += buf[tid + s];
        __syncthreads();
    }
    if (tid == 0)
        y[blockIdx.x] = buf[0];
}

int main()
{
    float *hX = (float *)malloc(sizeof(float) * (N));
    for (int i = 0; i < (N); ++i) hX[i] = (float)(i % 17);
    float *dX, *dY;
    cudaMalloc(&dX, sizeof(float) * (N));
    cudaMalloc(&dY, sizeof(float) * (N / 256));
    cudaMemcpy(dX, hX, sizeof(float) * (N), cudaMemcpyHostToDevice);
    block_sum<<<N / 256, 256>>>(dX, dY, N);
    float *hY = (float *)malloc(sizeof(float) * (N / 256));
    cudaMemcpy(hY, dY, sizeof(float) * (N / 256), cudaMemcpyDeviceToHost);
    printf("%f\n", hY[0]);
    cudaFree(dX);
    cudaFree(dY);
    free(hX);
    free(hY);
    return 0;
}
