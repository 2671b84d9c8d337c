// A non-template RAII class owning a device allocation (cudaMalloc in the constructor, cudaFree
// in the destructor, move-only, a `data()` accessor), as C++ code bases wrap the runtime API,
// next to plain `cudaMalloc`'d pointers: the kernel launched on raw pointers lifts, the one
// launched on `scratch.data()` gets its buffer from a member function.
#include <cstddef>
#include <cstdio>
#include <cuda_runtime.h>
#include <utility>

#define COUNT 8192

class DeviceBuffer {
public:
    DeviceBuffer() = default;
    explicit DeviceBuffer(std::size_t count) : count_(count)
    {
        if (cudaMalloc(&data_, count * sizeof(float)) != cudaSuccess)
            data_ = nullptr;
    }
    DeviceBuffer(DeviceBuffer &&other) noexcept : data_(std::exchange(other.data_, nullptr)), count_(other.count_) {}
    DeviceBuffer &operator=(DeviceBuffer &&other) noexcept
    {
        std::swap(data_, other.data_);
        std::swap(count_, other.count_);
        return *this;
    }
    DeviceBuffer(const DeviceBuffer &) = delete;
    ~DeviceBuffer()
    {
        if (data_)
            cudaFree(data_);
    }
    float *data() { return data_; }
    std::size_t size() const { return count_; }

private:
    float *data_ = nullptr;
    std::size_t count_ = 0;
};

__global__ void sigmoid(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = 1.0f / (1.0f + expf(-in[i]));
}

__global__ void fillRamp(float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = 0.001f * i;
}

int main()
{
    float *d_in, *d_out;
    cudaMalloc(&d_in, COUNT * sizeof(float));
    cudaMalloc(&d_out, COUNT * sizeof(float));
    cudaMemset(d_in, 0, COUNT * sizeof(float));
    sigmoid<<<COUNT / 256, 256>>>(d_in, d_out, COUNT);

    DeviceBuffer scratch(COUNT);
    fillRamp<<<COUNT / 256, 256>>>(scratch.data(), COUNT);
    cudaDeviceSynchronize();
    printf("%zu floats in scratch\n", scratch.size());
    cudaFree(d_in);
    cudaFree(d_out);
    return 0;
}
