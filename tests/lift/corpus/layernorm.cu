// Layer normalisation over the last dimension, one thread per row (two-pass mean and variance),
// followed by the learned scale and shift.
#include <cstdio>
#include <cstdlib>
#include <cmath>

#define EPS 1e-5f

__global__ void layerNorm(const float *x, const float *gamma, const float *beta, float *y, int rows, int hidden)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        float mean = 0.0f;
        for (int i = 0; i < hidden; i++)
            mean += x[r * hidden + i];
        mean /= hidden;

        float var = 0.0f;
        for (int i = 0; i < hidden; i++) {
            float d = x[r * hidden + i] - mean;
            var += d * d;
        }
        var /= hidden;
        float inv = rsqrtf(var + EPS);

        for (int i = 0; i < hidden; i++)
            y[r * hidden + i] = (x[r * hidden + i] - mean) * inv * gamma[i] + beta[i];
    }
}

int main()
{
    int rows = 1024;
    int hidden = 768;
    float *h_x = (float *)malloc(rows * hidden * sizeof(float));
    float *h_g = (float *)malloc(hidden * sizeof(float));
    float *h_b = (float *)malloc(hidden * sizeof(float));
    for (int i = 0; i < rows * hidden; i++) h_x[i] = rand() / (float)RAND_MAX;
    for (int i = 0; i < hidden; i++) { h_g[i] = 1.0f; h_b[i] = 0.0f; }

    float *d_x, *d_g, *d_b, *d_y;
    cudaMalloc(&d_x, rows * hidden * sizeof(float));
    cudaMalloc(&d_g, hidden * sizeof(float));
    cudaMalloc(&d_b, hidden * sizeof(float));
    cudaMalloc(&d_y, rows * hidden * sizeof(float));
    cudaMemcpy(d_x, h_x, rows * hidden * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemcpy(d_g, h_g, hidden * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemcpy(d_b, h_b, hidden * sizeof(float), cudaMemcpyHostToDevice);

    layerNorm<<<(rows + 63) / 64, 64>>>(d_x, d_g, d_b, d_y, rows, hidden);
    cudaMemcpy(h_x, d_y, rows * hidden * sizeof(float), cudaMemcpyDeviceToHost);
    printf("%f\n", h_x[0]);
    cudaFree(d_x); cudaFree(d_g); cudaFree(d_b); cudaFree(d_y);
    free(h_x); free(h_g); free(h_b);
    return 0;
}
