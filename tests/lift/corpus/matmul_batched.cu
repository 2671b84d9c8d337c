// Batched matrix multiplication: C[b] = A[b] * B[b] for every b, with the batch on gridDim.z.
#include <cstdio>
#include <cstdlib>

#define TILE 16

__global__ void batchedMatmul(const float *A, const float *B, float *C, int batch, int m, int n, int k)
{
    int b = blockIdx.z;
    int row = blockIdx.y * TILE + threadIdx.y;
    int col = blockIdx.x * TILE + threadIdx.x;
    if (b < batch && row < m && col < n) {
        const float *a = A + b * m * k;
        const float *bm = B + b * k * n;
        float sum = 0.0f;
        for (int p = 0; p < k; ++p)
            sum += a[row * k + p] * bm[p * n + col];
        C[(b * m + row) * n + col] = sum;
    }
}

int main()
{
    const int BATCH = 8, Mdim = 128, Ndim = 96, Kdim = 64;
    size_t sizeA = BATCH * Mdim * Kdim * sizeof(float);
    size_t sizeB = BATCH * Kdim * Ndim * sizeof(float);
    size_t sizeC = BATCH * Mdim * Ndim * sizeof(float);
    float *hA = (float *)malloc(sizeA), *hB = (float *)malloc(sizeB), *hC = (float *)malloc(sizeC);
    for (int i = 0; i < BATCH * Mdim * Kdim; ++i) hA[i] = rand() / (float)RAND_MAX;
    for (int i = 0; i < BATCH * Kdim * Ndim; ++i) hB[i] = rand() / (float)RAND_MAX;

    float *dA, *dB, *dC;
    cudaMalloc(&dA, sizeA);
    cudaMalloc(&dB, sizeB);
    cudaMalloc(&dC, sizeC);
    cudaMemcpy(dA, hA, sizeA, cudaMemcpyHostToDevice);
    cudaMemcpy(dB, hB, sizeB, cudaMemcpyHostToDevice);

    dim3 block(TILE, TILE);
    dim3 grid((Ndim + TILE - 1) / TILE, (Mdim + TILE - 1) / TILE, BATCH);
    batchedMatmul<<<grid, block>>>(dA, dB, dC, BATCH, Mdim, Ndim, Kdim);
    cudaMemcpy(hC, dC, sizeC, cudaMemcpyDeviceToHost);
    printf("%f\n", hC[0]);
    cudaFree(dA); cudaFree(dB); cudaFree(dC);
    free(hA); free(hB); free(hC);
    return 0;
}
