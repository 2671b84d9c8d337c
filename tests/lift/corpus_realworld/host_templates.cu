// Host-side templates around a matrix transpose: a templated verification helper, a templated
// fill, std::vector, and comparisons in template code (`a[i] < b[i])`).
#include <cmath>
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

#define H 256
#define W 512

template <typename T>
T maxAbsDiff(const std::vector<T> &a, const std::vector<T> &b)
{
    T worst = T(0);
    for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
        T d = a[i] < b[i] ? b[i] - a[i] : a[i] - b[i];
        if (worst < d)
            worst = d;
    }
    return worst;
}

template <typename T, int Scale>
void fill(std::vector<T> &v)
{
    for (size_t i = 0; i < v.size(); ++i)
        v[i] = static_cast<T>(i % Scale);
}

__global__ void transpose(const float *in, float *out, int height, int width)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height)
        out[x * height + y] = in[y * width + x];
}

int main()
{
    std::vector<float> h(H * W), back(H * W);
    fill<float, 17>(h);
    float *in, *out;
    cudaMalloc(&in, H * W * sizeof(float));
    cudaMalloc(&out, H * W * sizeof(float));
    cudaMemcpy(in, h.data(), H * W * sizeof(float), cudaMemcpyHostToDevice);
    dim3 block(32, 8);
    dim3 grid(W / 32, H / 8);
    transpose<<<grid, block>>>(in, out, H, W);
    cudaMemcpy(back.data(), out, H * W * sizeof(float), cudaMemcpyDeviceToHost);
    printf("max diff %f\n", maxAbsDiff(h, back));
    cudaFree(in);
    cudaFree(out);
    return 0;
}
