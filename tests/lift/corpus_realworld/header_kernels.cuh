// Kernels kept in a header, as projects split them from the host code (included by
// header_kernels.cu with a quoted #include).
#pragma once

#ifndef HK_BLOCK
#define HK_BLOCK 256
#endif

__device__ inline float geluApprox(float x)
{
    return 0.5f * x * (1.0f + tanhf(0.7978845608f * (x + 0.044715f * x * x * x)));
}

__global__ void biasGelu(const float *x, const float *bias, float *y, int rows, int cols)
{
    int r = blockIdx.y;
    int c = blockIdx.x * HK_BLOCK + threadIdx.x;
    if (r < rows && c < cols)
        y[r * cols + c] = geluApprox(x[r * cols + c] + bias[c]);
}
