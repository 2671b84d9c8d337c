// 1-D three-point smoothing stencil with zero padding at both ends.
#include <stdio.h>
#include <stdlib.h>

#define N 100000
#define THREADS 256

__global__ void smooth(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float left = (i > 0) ? in[i - 1] : 0.0f;
        float right = (i < n - 1) ? in[i + 1] : 0.0f;
        out[i] = 0.25f * left + 0.5f * in[i] + 0.25f * right;
    }
}

int main()
{
    float *h_in = (float *)malloc(N * sizeof(float));
    float *h_out = (float *)malloc(N * sizeof(float));
    for (int i = 0; i < N; i++) h_in[i] = (float)(i % 17);
    float *d_in, *d_out;
    cudaMalloc(&d_in, N * sizeof(float));
    cudaMalloc(&d_out, N * sizeof(float));
    cudaMemcpy(d_in, h_in, N * sizeof(float), cudaMemcpyHostToDevice);
    smooth<<<(N + THREADS - 1) / THREADS, THREADS>>>(d_in, d_out, N);
    cudaMemcpy(h_out, d_out, N * sizeof(float), cudaMemcpyDeviceToHost);
    printf("%f %f\n", h_out[0], h_out[N - 1]);
    cudaFree(d_in); cudaFree(d_out);
    free(h_in); free(h_out);
    return 0;
}
