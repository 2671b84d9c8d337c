// The same buffer passed as input and (shifted) output: out = in + 1 element, so thread i writes
// what thread i + 1 reads.
#include <cstdio>
#include <cstdlib>

__global__ void shiftAdd(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = in[i] + 1.0f;
}

int main()
{
    const int n = 1000;
    float *d_buf;
    cudaMalloc(&d_buf, (n + 1) * sizeof(float));
    cudaMemset(d_buf, 0, (n + 1) * sizeof(float));
    shiftAdd<<<(n + 127) / 128, 128>>>(d_buf, d_buf + 1, n);
    float h[4];
    cudaMemcpy(h, d_buf, 4 * sizeof(float), cudaMemcpyDeviceToHost);
    printf("%f\n", h[3]);
    cudaFree(d_buf);
    return 0;
}
