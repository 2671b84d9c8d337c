// Row sums of a matrix, one thread per row (before students learn shared-memory reductions).
#include <cstdio>
#include <cstdlib>

#define ROWS 10000
#define COLS 300

__global__ void rowSum(const float *mat, float *sums, int rows, int cols)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        float s = 0;
        for (int c = 0; c < cols; c++) {
            s += mat[r * cols + c];
        }
        sums[r] = s;
    }
}

int main()
{
    float *h_mat = (float *)malloc(ROWS * COLS * sizeof(float));
    float *h_sums = (float *)malloc(ROWS * sizeof(float));
    for (int i = 0; i < ROWS * COLS; i++) h_mat[i] = 1.0f;
    float *d_mat, *d_sums;
    cudaMalloc((void **)&d_mat, ROWS * COLS * sizeof(float));
    cudaMalloc((void **)&d_sums, ROWS * sizeof(float));
    cudaMemcpy(d_mat, h_mat, ROWS * COLS * sizeof(float), cudaMemcpyHostToDevice);
    rowSum<<<(ROWS + 127) / 128, 128>>>(d_mat, d_sums, ROWS, COLS);
    cudaMemcpy(h_sums, d_sums, ROWS * sizeof(float), cudaMemcpyDeviceToHost);
    printf("sum[0] = %f (expected %d)\n", h_sums[0], COLS);
    cudaFree(d_mat); cudaFree(d_sums);
    free(h_mat); free(h_sums);
    return 0;
}
