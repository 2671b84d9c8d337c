// Histogram with atomics, then normalisation to probabilities. The histogram kernel cannot be a
// tensor expression (threads race on shared bins through atomicAdd); the normalisation can.
#include <cstdio>
#include <cstdlib>

#define NUM_BINS 64

__global__ void histogram(const int *data, int *bins, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int b = data[i] % NUM_BINS;
        atomicAdd(&bins[b], 1);
    }
}

__global__ void normalizeBins(const int *bins, float *prob, int n)
{
    int b = threadIdx.x;
    if (b < NUM_BINS)
        prob[b] = (float)bins[b] / n;
}

int main()
{
    const int n = 1 << 16;
    int *h_data = (int *)malloc(n * sizeof(int));
    for (int i = 0; i < n; i++) h_data[i] = rand();
    int *d_data, *d_bins;
    float *d_prob;
    cudaMalloc(&d_data, n * sizeof(int));
    cudaMalloc(&d_bins, NUM_BINS * sizeof(int));
    cudaMalloc(&d_prob, NUM_BINS * sizeof(float));
    cudaMemcpy(d_data, h_data, n * sizeof(int), cudaMemcpyHostToDevice);
    cudaMemset(d_bins, 0, NUM_BINS * sizeof(int));
    histogram<<<(n + 255) / 256, 256>>>(d_data, d_bins, n);
    normalizeBins<<<1, NUM_BINS>>>(d_bins, d_prob, n);
    float h_prob[NUM_BINS];
    cudaMemcpy(h_prob, d_prob, NUM_BINS * sizeof(float), cudaMemcpyDeviceToHost);
    printf("p[0] = %f\n", h_prob[0]);
    cudaFree(d_data); cudaFree(d_bins); cudaFree(d_prob);
    free(h_data);
    return 0;
}
