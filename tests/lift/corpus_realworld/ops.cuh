// Element-wise operations kept in a header beside the program (included by ops_header.cu with a
// quoted #include): `__device__` helpers, a default for the negative slope that the including
// file may define first, and a kernel that applies them.
#pragma once

#ifndef OPS_LEAK
#define OPS_LEAK 0.1f
#endif

#ifndef OPS_THREADS
#define OPS_THREADS 128
#endif

__device__ __forceinline__ float leakyRelu(float v)
{
    return v > 0.0f ? v : OPS_LEAK * v;
}

__device__ __forceinline__ float affine(float v, float w, float b)
{
    return v * w + b;
}

__global__ void affineLeaky(const float *x, const float *w, const float *b, float *y, int n, int features)
{
    int i = blockIdx.x * OPS_THREADS + threadIdx.x;
    int f = blockIdx.y;
    if (i < n && f < features)
        y[f * n + i] = leakyRelu(affine(x[f * n + i], w[f], b[f]));
}
