// A fully unrolled kernel that keeps 64 loaded values live: many registers per thread.
// A textbook kernel for the rubric of the program as written (tests/rubric/test_rubric_as_written.cpp).
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define N (1 << 16)

__global__ void heavy(const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float a[64];
#pragma unroll
        for (int j = 0; j < 64; ++j)
            a[j] = x[j * n + i];
        float s = 0.0f;
#pragma unroll
        for (int j = 0; j < 64; ++j) {
#pragma unroll
            for (int k = 0; k < 64; ++k)
                s += a[j] * a[(j * 7 + k) % 64];
        }
        y[i] = s;
    }
}

int main()
{
    float *hX = (float *)malloc(sizeof(float) * (64 * N));
    for (int i = 0; i < (64 * N); ++i) hX[i] = (float)(i % 17);
    float *dX, *dY;
    cudaMalloc(&dX, sizeof(float) * (64 * N));
    cudaMalloc(&dY, sizeof(float) * (N));
    cudaMemcpy(dX, hX, sizeof(float) * (64 * N), cudaMemcpyHostToDevice);
    heavy<<<N / 256, 256>>>(dX, dY, N);
    float *hY = (float *)malloc(sizeof(float) * (N));
    cudaMemcpy(hY, dY, sizeof(float) * (N), cudaMemcpyDeviceToHost);
    printf("%f\n", hY[0]);
    cudaFree(dX);
    cudaFree(dY);
    free(hX);
    free(hY);
    return 0;
}
