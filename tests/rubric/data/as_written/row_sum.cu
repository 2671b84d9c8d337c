// Row sums, one thread per row: the lanes of a warp read 32 different rows (uncoalesced).
// A textbook kernel for the rubric of the program as written (tests/rubric/test_rubric_as_written.cpp).
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define ROWS 4096
#define COLS 1024

__global__ void row_sum(const float *x, float *y, int rows, int cols)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        float s = 0.0f;
        for (int c = 0; c < cols; ++c)
            s += x[r * cols + c];
        y[r] = s;
    }
}

int main()
{
    float *hX = (float *)malloc(sizeof(float) * (ROWS * COLS));
    for (int i = 0; i < (ROWS * COLS); ++i) hX[i] = (float)(i % 17);
    float *dX, *dY;
    cudaMalloc(&dX, sizeof(float) * (ROWS * COLS));
    cudaMalloc(&dY, sizeof(float) * (ROWS));
    cudaMemcpy(dX, hX, sizeof(float) * (ROWS * COLS), cudaMemcpyHostToDevice);
    row_sum<<<ROWS / 256, 256>>>(dX, dY, ROWS, COLS);
    float *hY = (float *)malloc(sizeof(float) * (ROWS));
    cudaMemcpy(hY, dY, sizeof(float) * (ROWS), cudaMemcpyDeviceToHost);
    printf("%f\n", hY[0]);
    cudaFree(dX);
    cudaFree(dY);
    free(hX);
    free(hY);
    return 0;
}
