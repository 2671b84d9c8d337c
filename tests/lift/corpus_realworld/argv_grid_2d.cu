// An image tool that takes its width and height on the command line with defaults
// (`argc >= 3 ? atoi(argv[1]) : 1920`), sizes its planes with a `size_t` byte count, rounds the grid
// up with `dim3 grid((w + 15) / 16, (h + 15) / 16)`, converts three float colour planes to
// luminance and applies a gain to the result in place.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

__global__ void rgbToLuma(const float *r, const float *g, const float *b, float *luma, int w, int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h)
        return;
    int p = y * w + x;
    luma[p] = 0.299f * r[p] + 0.587f * g[p] + 0.114f * b[p];
}

__global__ void applyGain(float *img, float gain, int w, int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h)
        img[y * w + x] *= gain;
}

int main(int argc, char **argv)
{
    int w = argc >= 3 ? atoi(argv[1]) : 1920;
    int h = argc >= 3 ? atoi(argv[2]) : 1080;
    size_t plane = (size_t)w * h * sizeof(float);
    float *r, *g, *b, *luma;
    cudaMalloc(&r, plane);
    cudaMalloc(&g, plane);
    cudaMalloc(&b, plane);
    cudaMalloc(&luma, plane);
    cudaMemset(r, 0, plane);
    cudaMemset(g, 0, plane);
    cudaMemset(b, 0, plane);

    dim3 block(16, 16);
    dim3 grid((w + 15) / 16, (h + 15) / 16);
    rgbToLuma<<<grid, block>>>(r, g, b, luma, w, h);
    applyGain<<<grid, block>>>(luma, 1.5f, w, h);
    cudaDeviceSynchronize();
    printf("%d x %d converted\n", w, h);
    cudaFree(r);
    cudaFree(g);
    cudaFree(b);
    cudaFree(luma);
    return 0;
}
