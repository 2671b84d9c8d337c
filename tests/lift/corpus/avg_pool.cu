// Average pooling over K x K windows with stride S on a C x H x W feature map (no padding).
#include <stdio.h>
#include <stdlib.h>

#define C 16
#define H 56
#define W 56
#define K 2
#define S 2
#define OH ((H - K) / S + 1)
#define OW ((W - K) / S + 1)

__global__ void avgPool(const float *in, float *out)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= C * OH * OW)
        return;
    int ow = idx % OW;
    int oh = (idx / OW) % OH;
    int c = idx / (OW * OH);
    float acc = 0.0f;
    for (int kh = 0; kh < K; kh++)
        for (int kw = 0; kw < K; kw++)
            acc += in[(c * H + oh * S + kh) * W + ow * S + kw];
    out[idx] = acc / (K * K);
}

int main()
{
    float *h_in = (float *)malloc(C * H * W * sizeof(float));
    float *h_out = (float *)malloc(C * OH * OW * sizeof(float));
    for (int i = 0; i < C * H * W; i++) h_in[i] = (float)(i % 13);
    float *d_in, *d_out;
    cudaMalloc(&d_in, C * H * W * sizeof(float));
    cudaMalloc(&d_out, C * OH * OW * sizeof(float));
    cudaMemcpy(d_in, h_in, C * H * W * sizeof(float), cudaMemcpyHostToDevice);
    int total = C * OH * OW;
    avgPool<<<(total + 255) / 256, 256>>>(d_in, d_out);
    cudaMemcpy(h_out, d_out, C * OH * OW * sizeof(float), cudaMemcpyDeviceToHost);
    printf("%f\n", h_out[0]);
    cudaFree(d_in); cudaFree(d_out);
    free(h_in); free(h_out);
    return 0;
}
