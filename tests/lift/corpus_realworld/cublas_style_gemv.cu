// A row-major matrix-vector product with a host reference in a namespace, constexpr sizes,
// a static_assert and a lambda in host code.
#include <algorithm>
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

namespace ref {
template <typename T>
void gemv(const std::vector<T> &A, const std::vector<T> &x, std::vector<T> &y, int rows, int cols)
{
    for (int r = 0; r < rows; ++r) {
        T acc = 0;
        for (int c = 0; c < cols; ++c)
            acc += A[r * cols + c] * x[c];
        y[r] = acc;
    }
}
} // namespace ref

#define ROWS 768
#define COLS 1024
static_assert(ROWS % 128 == 0, "ROWS must be a multiple of the block size");

__global__ void gemv(const float *A, const float *x, float *y, int rows, int cols)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        float acc = 0.0f;
        for (int c = 0; c < cols; ++c)
            acc += A[r * cols + c] * x[c];
        y[r] = acc;
    }
}

int main()
{
    std::vector<float> hA(ROWS * COLS, 1.0f), hx(COLS, 2.0f), hy(ROWS), ry(ROWS);
    auto close = [](float a, float b) { return std::abs(a - b) < 1e-3f; };
    float *A, *x, *y;
    cudaMalloc(&A, ROWS * COLS * sizeof(float));
    cudaMalloc(&x, COLS * sizeof(float));
    cudaMalloc(&y, ROWS * sizeof(float));
    cudaMemcpy(A, hA.data(), ROWS * COLS * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemcpy(x, hx.data(), COLS * sizeof(float), cudaMemcpyHostToDevice);
    gemv<<<ROWS / 128, 128>>>(A, x, y, ROWS, COLS);
    cudaMemcpy(hy.data(), y, ROWS * sizeof(float), cudaMemcpyDeviceToHost);
    ref::gemv(hA, hx, ry, ROWS, COLS);
    bool ok = std::equal(hy.begin(), hy.end(), ry.begin(), close);
    printf("%s\n", ok ? "PASSED" : "FAILED");
    return ok ? 0 : 1;
}
