// Tiled transpose with the tile padded to 33 columns: column reads spread over the 32 banks.
// A textbook kernel for the rubric of the program as written (tests/rubric/test_rubric_as_written.cpp).
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define N 1024

__global__ void transpose_tiled(const float *in, float *out, int n)
{
    __shared__ float tile[32][33];
    int x = blockIdx.x * 32 + threadIdx.x;
    int y = blockIdx.y * 32 + threadIdx.y;
    tile[threadIdx.y][threadIdx.x] = in[y * n + x];
    __syncthreads();
    int tx = blockIdx.y * 32 + threadIdx.x;
    int ty = blockIdx.x * 32 + threadIdx.y;
    out[ty * n + tx] = tile[threadIdx.x][threadIdx.y];
}

int main()
{
    float *hX = (float *)malloc(sizeof(float) * (N * N));
    for (int i = 0; i < (N * N); ++i) hX[i] = (float)(i % 17);
    float *dX, *dY;
    cudaMalloc(&dX, sizeof(float) * (N * N));
    cudaMalloc(&dY, sizeof(float) * (N * N));
    cudaMemcpy(dX, hX, sizeof(float) * (N * N), cudaMemcpyHostToDevice);
    dim3 block(32, 32);
    dim3 grid(N / 32, N / 32);
    transpose_tiled<<<grid, block>>>(dX, dY, N);
    float *hY = (float *)malloc(sizeof(float) * (N * N));
    cudaMemcpy(hY, dY, sizeof(float) * (N * N), cudaMemcpyDeviceToHost);
    printf("%f\n", hY[0]);
    cudaFree(dX);
    cudaFree(dY);
    free(hX);
    free(hY);
    return 0;
}
