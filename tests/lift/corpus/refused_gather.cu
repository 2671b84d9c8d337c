// Embedding lookup: out[i][:] = table[idx[i]][:]. Which row is read depends on the data in idx.
#include <cstdio>
#include <cstdlib>

#define VOCAB 1000
#define DIM 64

__global__ void gatherRows(const float *table, const int *idx, float *out, int n)
{
    int i = blockIdx.y;
    int d = threadIdx.x;
    if (i < n && d < DIM)
        out[i * DIM + d] = table[idx[i] * DIM + d];
}

int main()
{
    int n = 512;
    float *h_table = (float *)malloc(VOCAB * DIM * sizeof(float));
    int *h_idx = (int *)malloc(n * sizeof(int));
    for (int i = 0; i < VOCAB * DIM; i++) h_table[i] = i * 0.001f;
    for (int i = 0; i < n; i++) h_idx[i] = rand() % VOCAB;
    float *d_table, *d_out;
    int *d_idx;
    cudaMalloc(&d_table, VOCAB * DIM * sizeof(float));
    cudaMalloc(&d_idx, n * sizeof(int));
    cudaMalloc(&d_out, n * DIM * sizeof(float));
    cudaMemcpy(d_table, h_table, VOCAB * DIM * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemcpy(d_idx, h_idx, n * sizeof(int), cudaMemcpyHostToDevice);
    dim3 grid(1, n);
    gatherRows<<<grid, DIM>>>(d_table, d_idx, d_out, n);
    float h_out[DIM];
    cudaMemcpy(h_out, d_out, DIM * sizeof(float), cudaMemcpyDeviceToHost);
    printf("%f\n", h_out[0]);
    cudaFree(d_table); cudaFree(d_idx); cudaFree(d_out);
    free(h_table); free(h_idx);
    return 0;
}
