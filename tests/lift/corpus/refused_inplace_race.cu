// In-place smoothing: every thread overwrites a[i] while its neighbours read a[i - 1] and
// a[i + 1]. The result depends on which threads run first.
#include <cstdio>
#include <cstdlib>

__global__ void smoothInPlace(float *a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i > 0 && i < n - 1)
        a[i] = (a[i - 1] + a[i] + a[i + 1]) / 3.0f;
}

int main()
{
    const int n = 4096;
    float *h = (float *)malloc(n * sizeof(float));
    for (int i = 0; i < n; i++) h[i] = (float)(i % 5);
    float *d_a;
    cudaMalloc(&d_a, n * sizeof(float));
    cudaMemcpy(d_a, h, n * sizeof(float), cudaMemcpyHostToDevice);
    smoothInPlace<<<(n + 255) / 256, 256>>>(d_a, n);
    cudaMemcpy(h, d_a, n * sizeof(float), cudaMemcpyDeviceToHost);
    printf("%f\n", h[1]);
    cudaFree(d_a);
    free(h);
    return 0;
}
