// Column maxima and column sums of an n x m matrix, one thread per column: coalesced reads as
// neighbouring threads walk neighbouring columns down the rows.
#include <cstdio>
#include <cstdlib>
#include <cfloat>

__global__ void columnStats(const float *data, float *colMax, float *colSum, int n, int m)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (col < m) {
        float best = -FLT_MAX;
        float total = 0.0f;
        for (int row = 0; row < n; ++row) {
            float v = data[row * m + col];
            if (v > best)
                best = v;
            total += v;
        }
        colMax[col] = best;
        colSum[col] = total;
    }
}

int main()
{
    int n = 2048, m = 333;
    float *h = (float *)malloc(n * m * sizeof(float));
    for (int i = 0; i < n * m; ++i) h[i] = rand() / (float)RAND_MAX;
    float *d_data, *d_max, *d_sum;
    cudaMalloc(&d_data, n * m * sizeof(float));
    cudaMalloc(&d_max, m * sizeof(float));
    cudaMalloc(&d_sum, m * sizeof(float));
    cudaMemcpy(d_data, h, n * m * sizeof(float), cudaMemcpyHostToDevice);
    columnStats<<<(m + 63) / 64, 64>>>(d_data, d_max, d_sum, n, m);
    float hmax[4], hsum[4];
    cudaMemcpy(hmax, d_max, 4 * sizeof(float), cudaMemcpyDeviceToHost);
    cudaMemcpy(hsum, d_sum, 4 * sizeof(float), cudaMemcpyDeviceToHost);
    printf("%f %f\n", hmax[0], hsum[0]);
    cudaFree(d_data); cudaFree(d_max); cudaFree(d_sum);
    free(h);
    return 0;
}
