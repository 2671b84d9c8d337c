// The tiled matrix transpose as the transpose sample and its write-ups give it: a kernel template
// over the tile size and the rows each block covers (`transposeTiled<32, 8><<<...>>>`), a padded
// shared tile (`TILE + 1` columns against bank conflicts), a strided loop of `BLOCK_ROWS`, and a
// plain copy kernel timed beside it as the bandwidth baseline.
#include <cstdio>
#include <cuda_runtime.h>

const int WIDTH = 2048;
const int HEIGHT = 1024;

template <int TILE, int BLOCK_ROWS>
__global__ void transposeTiled(const float *idata, float *odata, int width, int height)
{
    __shared__ float tile[TILE][TILE + 1];

    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += BLOCK_ROWS)
        tile[threadIdx.y + j][threadIdx.x] = idata[(y + j) * width + x];

    __syncthreads();

    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += BLOCK_ROWS)
        odata[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
}

__global__ void copyBaseline(const float *idata, float *odata, int width, int height)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height)
        odata[y * width + x] = idata[y * width + x];
}

int main()
{
    const size_t bytes = WIDTH * HEIGHT * sizeof(float);
    float *d_in, *d_copy, *d_t;
    cudaMalloc(&d_in, bytes);
    cudaMalloc(&d_copy, bytes);
    cudaMalloc(&d_t, bytes);
    cudaMemset(d_in, 0, bytes);

    dim3 copyBlock(32, 8);
    dim3 copyGrid(WIDTH / 32, HEIGHT / 8);
    copyBaseline<<<copyGrid, copyBlock>>>(d_in, d_copy, WIDTH, HEIGHT);

    dim3 tBlock(32, 8);
    dim3 tGrid(WIDTH / 32, HEIGHT / 32);
    transposeTiled<32, 8><<<tGrid, tBlock>>>(d_in, d_t, WIDTH, HEIGHT);

    cudaError_t err = cudaDeviceSynchronize();
    if (err != cudaSuccess)
        printf("error: %s\n", cudaGetErrorString(err));
    cudaFree(d_in);
    cudaFree(d_copy);
    cudaFree(d_t);
    return 0;
}
