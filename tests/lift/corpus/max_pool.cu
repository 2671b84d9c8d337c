// 3 x 3 max pooling with stride 2 and padding 1 over a C x H x W map, one thread per output
// element on a 2-D grid (x: output column, y: channel * output row).
#include <cstdio>
#include <cstdlib>
#include <cfloat>

#define POOL 3
#define STRIDE 2
#define PAD 1

__global__ void maxPool2d(const float *in, float *out, int channels, int height, int width, int outH, int outW)
{
    int ow = blockIdx.x * blockDim.x + threadIdx.x;
    int ohc = blockIdx.y * blockDim.y + threadIdx.y;
    if (ow >= outW || ohc >= channels * outH)
        return;
    int c = ohc / outH;
    int oh = ohc % outH;
    float m = -FLT_MAX;
    for (int i = 0; i < POOL; i++) {
        for (int j = 0; j < POOL; j++) {
            int h = oh * STRIDE - PAD + i;
            int w = ow * STRIDE - PAD + j;
            if (h >= 0 && h < height && w >= 0 && w < width)
                m = fmaxf(m, in[(c * height + h) * width + w]);
        }
    }
    out[(c * outH + oh) * outW + ow] = m;
}

int main()
{
    const int channels = 32, height = 45, width = 45;
    const int outH = (height + 2 * PAD - POOL) / STRIDE + 1;
    const int outW = (width + 2 * PAD - POOL) / STRIDE + 1;
    float *h_in = (float *)malloc(channels * height * width * sizeof(float));
    float *h_out = (float *)malloc(channels * outH * outW * sizeof(float));
    for (int i = 0; i < channels * height * width; i++) h_in[i] = rand() / (float)RAND_MAX;
    float *d_in, *d_out;
    cudaMalloc(&d_in, channels * height * width * sizeof(float));
    cudaMalloc(&d_out, channels * outH * outW * sizeof(float));
    cudaMemcpy(d_in, h_in, channels * height * width * sizeof(float), cudaMemcpyHostToDevice);
    dim3 block(32, 4);
    dim3 grid((outW + block.x - 1) / block.x, (channels * outH + block.y - 1) / block.y);
    maxPool2d<<<grid, block>>>(d_in, d_out, channels, height, width, outH, outW);
    cudaMemcpy(h_out, d_out, channels * outH * outW * sizeof(float), cudaMemcpyDeviceToHost);
    printf("%f\n", h_out[0]);
    cudaFree(d_in); cudaFree(d_out);
    free(h_in); free(h_out);
    return 0;
}
