// Naive single-precision matrix multiply: one thread per element of C = A * B.
// A is M x K, B is K x N, C is M x N, all row-major. Open this file in StitchCUDA Studio and press
// Optimize to see how the agents turn it into a tiled, register-blocked kernel.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define M 1024
#define N 1024
#define K 1024

__global__ void matmul_naive(const float *A, const float *B, float *C, int m, int n, int k)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < m && col < n) {
        float sum = 0.0f;
        for (int i = 0; i < k; ++i)
            sum += A[row * k + i] * B[i * n + col];
        C[row * n + col] = sum;
    }
}

int main()
{
    size_t bytesA = sizeof(float) * M * K, bytesB = sizeof(float) * K * N, bytesC = sizeof(float) * M * N;
    float *hA = (float *)malloc(bytesA), *hB = (float *)malloc(bytesB), *hC = (float *)malloc(bytesC);
    for (int i = 0; i < M * K; ++i) hA[i] = rand() / (float)RAND_MAX - 0.5f;
    for (int i = 0; i < K * N; ++i) hB[i] = rand() / (float)RAND_MAX - 0.5f;

    float *dA, *dB, *dC;
    cudaMalloc(&dA, bytesA);
    cudaMalloc(&dB, bytesB);
    cudaMalloc(&dC, bytesC);
    cudaMemcpy(dA, hA, bytesA, cudaMemcpyHostToDevice);
    cudaMemcpy(dB, hB, bytesB, cudaMemcpyHostToDevice);

    dim3 block(32, 32);
    dim3 grid((N + block.x - 1) / block.x, (M + block.y - 1) / block.y);
    matmul_naive<<<grid, block>>>(dA, dB, dC, M, N, K);
    cudaMemcpy(hC, dC, bytesC, cudaMemcpyDeviceToHost);
    printf("C[0][0] = %f\n", hC[0]);

    cudaFree(dA);
    cudaFree(dB);
    cudaFree(dC);
    free(hA);
    free(hB);
    free(hC);
    return 0;
}
