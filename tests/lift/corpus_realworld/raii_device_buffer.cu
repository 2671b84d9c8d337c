// A template RAII wrapper for device memory (member-initializer list, explicit constructor,
// deleted copy) and a kernel launched on the wrapper's pointer.
#include <cstddef>
#include <cstdio>
#include <cuda_runtime.h>

template <typename T>
class DeviceArray {
public:
    explicit DeviceArray(std::size_t n) : ptr_(nullptr), size_(n)
    {
        cudaMalloc(&ptr_, n * sizeof(T));
    }
    ~DeviceArray() { cudaFree(ptr_); }
    DeviceArray(const DeviceArray &) = delete;
    DeviceArray &operator=(const DeviceArray &) = delete;
    T *get() const { return ptr_; }
    std::size_t size() const { return size_; }

private:
    T *ptr_;
    std::size_t size_;
};

__global__ void negate(float *v, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        v[i] = -v[i];
}

int main()
{
    DeviceArray<float> values(1 << 12);
    negate<<<(1 << 12) / 128, 128>>>(values.get(), 1 << 12);
    cudaDeviceSynchronize();
    printf("%zu values negated\n", values.size());
    return 0;
}
