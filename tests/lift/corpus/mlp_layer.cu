// One MLP layer, Y = GELU(X * W + b), as three kernels: GEMM, bias add (in place) and the tanh
// approximation of GELU.
#include <cstdio>
#include <cstdlib>
#include <cmath>

#define BATCH 256
#define IN_FEATURES 512
#define OUT_FEATURES 384

__global__ void gemm(const float *X, const float *Wt, float *H, int m, int n, int k)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < m && col < n) {
        float acc = 0.0f;
        for (int i = 0; i < k; ++i)
            acc += X[row * k + i] * Wt[i * n + col];
        H[row * n + col] = acc;
    }
}

__global__ void addBias(float *H, const float *b, int m, int n)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < m * n)
        H[idx] += b[idx % n];
}

__device__ float gelu(float x)
{
    const float c = 0.7978845608f; // sqrt(2 / pi)
    return 0.5f * x * (1.0f + tanhf(c * (x + 0.044715f * x * x * x)));
}

__global__ void geluKernel(const float *H, float *Y, int total)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < total)
        Y[idx] = gelu(H[idx]);
}

int main()
{
    size_t xBytes = BATCH * IN_FEATURES * sizeof(float);
    size_t wBytes = IN_FEATURES * OUT_FEATURES * sizeof(float);
    size_t hBytes = BATCH * OUT_FEATURES * sizeof(float);
    float *h_x = (float *)malloc(xBytes), *h_w = (float *)malloc(wBytes);
    float *h_b = (float *)malloc(OUT_FEATURES * sizeof(float)), *h_y = (float *)malloc(hBytes);
    for (int i = 0; i < BATCH * IN_FEATURES; i++) h_x[i] = rand() / (float)RAND_MAX - 0.5f;
    for (int i = 0; i < IN_FEATURES * OUT_FEATURES; i++) h_w[i] = (rand() / (float)RAND_MAX - 0.5f) * 0.1f;
    for (int i = 0; i < OUT_FEATURES; i++) h_b[i] = 0.01f * i;

    float *d_x, *d_w, *d_b, *d_h, *d_y;
    cudaMalloc(&d_x, xBytes);
    cudaMalloc(&d_w, wBytes);
    cudaMalloc(&d_b, OUT_FEATURES * sizeof(float));
    cudaMalloc(&d_h, hBytes);
    cudaMalloc(&d_y, hBytes);
    cudaMemcpy(d_x, h_x, xBytes, cudaMemcpyHostToDevice);
    cudaMemcpy(d_w, h_w, wBytes, cudaMemcpyHostToDevice);
    cudaMemcpy(d_b, h_b, OUT_FEATURES * sizeof(float), cudaMemcpyHostToDevice);

    dim3 block(16, 16);
    dim3 grid((OUT_FEATURES + 15) / 16, (BATCH + 15) / 16);
    gemm<<<grid, block>>>(d_x, d_w, d_h, BATCH, OUT_FEATURES, IN_FEATURES);
    int total = BATCH * OUT_FEATURES;
    addBias<<<(total + 255) / 256, 256>>>(d_h, d_b, BATCH, OUT_FEATURES);
    geluKernel<<<(total + 255) / 256, 256>>>(d_h, d_y, total);

    cudaMemcpy(h_y, d_y, hBytes, cudaMemcpyDeviceToHost);
    printf("y[0] = %f\n", h_y[0]);
    cudaFree(d_x); cudaFree(d_w); cudaFree(d_b); cudaFree(d_h); cudaFree(d_y);
    free(h_x); free(h_w); free(h_b); free(h_y);
    return 0;
}
