// Row-wise softmax in one kernel, one thread per row: max, sum of exponentials, normalise.
#include <cstdio>
#include <cstdlib>
#include <cmath>

__global__ void softmaxRows(const float *input, float *output, int rows, int cols)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows)
        return;
    const float *x = input + row * cols;
    float *y = output + row * cols;

    float maxVal = x[0];
    for (int j = 1; j < cols; ++j)
        maxVal = fmaxf(maxVal, x[j]);

    float sum = 0.0f;
    for (int j = 0; j < cols; ++j)
        sum += expf(x[j] - maxVal);

    for (int j = 0; j < cols; ++j)
        y[j] = expf(x[j] - maxVal) / sum;
}

int main()
{
    const int rows = 4096, cols = 1000;
    size_t bytes = rows * cols * sizeof(float);
    float *h_in = (float *)malloc(bytes), *h_out = (float *)malloc(bytes);
    for (int i = 0; i < rows * cols; ++i) h_in[i] = 4.0f * rand() / RAND_MAX - 2.0f;
    float *d_in, *d_out;
    cudaMalloc(&d_in, bytes);
    cudaMalloc(&d_out, bytes);
    cudaMemcpy(d_in, h_in, bytes, cudaMemcpyHostToDevice);
    softmaxRows<<<(rows + 255) / 256, 256>>>(d_in, d_out, rows, cols);
    cudaMemcpy(h_out, d_out, bytes, cudaMemcpyDeviceToHost);
    printf("%f\n", h_out[0]);
    cudaFree(d_in); cudaFree(d_out);
    free(h_in); free(h_out);
    return 0;
}
