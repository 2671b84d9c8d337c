// Direct 2-D convolution (NCHW, cross-correlation as in deep-learning frameworks) with zero
// padding and stride, one thread per output pixel and output channel; the batch is a loop.
#include <cstdio>
#include <cstdlib>

#define BATCH 2
#define C_IN 3
#define C_OUT 8
#define H 64
#define W 64
#define KH 3
#define KW 3
#define PAD 1
#define STRIDE 2
#define OH ((H + 2 * PAD - KH) / STRIDE + 1)
#define OW ((W + 2 * PAD - KW) / STRIDE + 1)

__global__ void conv2d(const float *input, const float *weight, const float *bias, float *output)
{
    int ow = blockIdx.x * blockDim.x + threadIdx.x;
    int oh = blockIdx.y * blockDim.y + threadIdx.y;
    int oc = blockIdx.z;
    if (ow >= OW || oh >= OH || oc >= C_OUT)
        return;
    for (int n = 0; n < BATCH; n++) {
        float sum = bias[oc];
        for (int ic = 0; ic < C_IN; ic++) {
            for (int kh = 0; kh < KH; kh++) {
                int ih = oh * STRIDE + kh - PAD;
                if (ih < 0 || ih >= H)
                    continue;
                for (int kw = 0; kw < KW; kw++) {
                    int iw = ow * STRIDE + kw - PAD;
                    if (iw < 0 || iw >= W)
                        continue;
                    sum += input[((n * C_IN + ic) * H + ih) * W + iw] * weight[((oc * C_IN + ic) * KH + kh) * KW + kw];
                }
            }
        }
        output[((n * C_OUT + oc) * OH + oh) * OW + ow] = sum;
    }
}

int main()
{
    size_t inBytes = BATCH * C_IN * H * W * sizeof(float);
    size_t wBytes = C_OUT * C_IN * KH * KW * sizeof(float);
    size_t outBytes = BATCH * C_OUT * OH * OW * sizeof(float);
    float *h_in = (float *)malloc(inBytes), *h_w = (float *)malloc(wBytes), *h_b = (float *)malloc(C_OUT * sizeof(float));
    float *h_out = (float *)malloc(outBytes);
    for (int i = 0; i < BATCH * C_IN * H * W; i++) h_in[i] = rand() / (float)RAND_MAX;
    for (int i = 0; i < C_OUT * C_IN * KH * KW; i++) h_w[i] = rand() / (float)RAND_MAX - 0.5f;
    for (int i = 0; i < C_OUT; i++) h_b[i] = 0.1f * i;

    float *d_in, *d_w, *d_b, *d_out;
    cudaMalloc(&d_in, inBytes);
    cudaMalloc(&d_w, wBytes);
    cudaMalloc(&d_b, C_OUT * sizeof(float));
    cudaMalloc(&d_out, outBytes);
    cudaMemcpy(d_in, h_in, inBytes, cudaMemcpyHostToDevice);
    cudaMemcpy(d_w, h_w, wBytes, cudaMemcpyHostToDevice);
    cudaMemcpy(d_b, h_b, C_OUT * sizeof(float), cudaMemcpyHostToDevice);

    dim3 block(16, 16);
    dim3 grid((OW + 15) / 16, (OH + 15) / 16, C_OUT);
    conv2d<<<grid, block>>>(d_in, d_w, d_b, d_out);
    cudaMemcpy(h_out, d_out, outBytes, cudaMemcpyDeviceToHost);
    printf("out[0] = %f\n", h_out[0]);
    cudaFree(d_in); cudaFree(d_w); cudaFree(d_b); cudaFree(d_out);
    free(h_in); free(h_w); free(h_b); free(h_out);
    return 0;
}
