// Shared-memory tiled matrix multiplication (Kirk & Hwu, "Programming Massively Parallel
// Processors"), with bounds checks so the sizes need not be multiples of the tile.
#include <cstdio>
#include <cstdlib>

#define TILE_WIDTH 16

__global__ void matrixMulTiled(const float *M, const float *N, float *P, int rowsM, int widthM, int colsN)
{
    __shared__ float Mds[TILE_WIDTH][TILE_WIDTH];
    __shared__ float Nds[TILE_WIDTH][TILE_WIDTH];

    int bx = blockIdx.x, by = blockIdx.y;
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = by * TILE_WIDTH + ty;
    int col = bx * TILE_WIDTH + tx;

    float pValue = 0.0f;
    for (int ph = 0; ph < (widthM + TILE_WIDTH - 1) / TILE_WIDTH; ++ph) {
        if (row < rowsM && ph * TILE_WIDTH + tx < widthM)
            Mds[ty][tx] = M[row * widthM + ph * TILE_WIDTH + tx];
        else
            Mds[ty][tx] = 0.0f;
        if (ph * TILE_WIDTH + ty < widthM && col < colsN)
            Nds[ty][tx] = N[(ph * TILE_WIDTH + ty) * colsN + col];
        else
            Nds[ty][tx] = 0.0f;
        __syncthreads();

        for (int k = 0; k < TILE_WIDTH; ++k)
            pValue += Mds[ty][k] * Nds[k][tx];
        __syncthreads();
    }
    if (row < rowsM && col < colsN)
        P[row * colsN + col] = pValue;
}

int main()
{
    int m = 1000, k = 600, n = 800;
    float *hM = (float *)malloc(m * k * sizeof(float));
    float *hN = (float *)malloc(k * n * sizeof(float));
    float *hP = (float *)malloc(m * n * sizeof(float));
    for (int i = 0; i < m * k; i++) hM[i] = rand() / (float)RAND_MAX;
    for (int i = 0; i < k * n; i++) hN[i] = rand() / (float)RAND_MAX;

    float *dM, *dN, *dP;
    cudaMalloc(&dM, m * k * sizeof(float));
    cudaMalloc(&dN, k * n * sizeof(float));
    cudaMalloc(&dP, m * n * sizeof(float));
    cudaMemcpy(dM, hM, m * k * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemcpy(dN, hN, k * n * sizeof(float), cudaMemcpyHostToDevice);

    dim3 dimBlock(TILE_WIDTH, TILE_WIDTH);
    dim3 dimGrid((n + TILE_WIDTH - 1) / TILE_WIDTH, (m + TILE_WIDTH - 1) / TILE_WIDTH);
    matrixMulTiled<<<dimGrid, dimBlock>>>(dM, dN, dP, m, k, n);
    cudaMemcpy(hP, dP, m * n * sizeof(float), cudaMemcpyDeviceToHost);
    printf("P[0] = %f\n", hP[0]);
    cudaFree(dM); cudaFree(dN); cudaFree(dP);
    free(hM); free(hN); free(hP);
    return 0;
}
