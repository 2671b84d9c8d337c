// A kernel that evaluates a recursive device function per element (binomial coefficients).
#include <cstdio>

__device__ int binomial(int n, int k)
{
    if (k == 0 || k == n)
        return 1;
    return binomial(n - 1, k - 1) + binomial(n - 1, k);
}

__global__ void binomials(int *out, int n)
{
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k <= n)
        out[k] = binomial(n, k);
}

int main()
{
    const int n = 20;
    int *d_out;
    cudaMalloc(&d_out, (n + 1) * sizeof(int));
    binomials<<<1, 32>>>(d_out, n);
    int h_out[n + 1];
    cudaMemcpy(h_out, d_out, (n + 1) * sizeof(int), cudaMemcpyDeviceToHost);
    printf("%d\n", h_out[n / 2]);
    cudaFree(d_out);
    return 0;
}
