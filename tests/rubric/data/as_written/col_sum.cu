// Column sums, one thread per column: the lanes of a warp read 32 adjacent columns of one row (coalesced).
// A textbook kernel for the rubric of the program as written (tests/rubric/test_rubric_as_written.cpp).
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define ROWS 1024
#define COLS 4096

__global__ void col_sum(const float *x, float *y, int rows, int cols)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c < cols) {
        float s = 0.0f;
        for (int r = 0; r < rows; ++r)
            s += x[r * cols + c];
        y[c] = s;
    }
}

int main()
{
    float *hX = (float *)malloc(sizeof(float) * (ROWS * COLS));
    for (int i = 0; i < (ROWS * COLS); ++i) hX[i] = (float)(i % 17);
    float *dX, *dY;
    cudaMalloc(&dX, sizeof(float) * (ROWS * COLS));
    cudaMalloc(&dY, sizeof(float) * (COLS));
    cudaMemcpy(dX, hX, sizeof(float) * (ROWS * COLS), cudaMemcpyHostToDevice);
    col_sum<<<COLS / 256, 256>>>(dX, dY, ROWS, COLS);
    float *hY = (float *)malloc(sizeof(float) * (COLS));
    cudaMemcpy(hY, dY, sizeof(float) * (COLS), cudaMemcpyDeviceToHost);
    printf("%f\n", hY[0]);
    cudaFree(dX);
    cudaFree(dY);
    free(hX);
    free(hY);
    return 0;
}
