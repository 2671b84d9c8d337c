#include "core/runner/HostData.h"

#include <bit>
#include <cmath>
#include <cstring>

namespace stitch::runner {

namespace {

// SplitMix64 in counter form: element i is mix(key + (i + 1) * gamma), so every element can be
// drawn on its own (in any order, on any thread) and every build draws the same inputs from a seed
// (std::uniform_real_distribution is implementation-defined).
constexpr std::uint64_t kGamma = 0x9e3779b97f4a7c15ull;

std::uint64_t mix(std::uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

double unit(std::uint64_t z)
{
    return static_cast<double>(z >> 11) * 0x1.0p-53; ///< [0, 1)
}

std::uint64_t fnv1a(const std::string &s)
{
    std::uint64_t h = 0xcbf29ce484222325ull;
    for (unsigned char c : s)
        h = (h ^ c) * 0x100000001b3ull;
    return h;
}

template <typename T>
T loadAs(const std::byte *data, std::uint64_t index)
{
    T v;
    std::memcpy(&v, data + index * sizeof(T), sizeof(T));
    return v;
}

template <typename T>
void storeAs(std::byte *data, std::uint64_t index, T v)
{
    std::memcpy(data + index * sizeof(T), &v, sizeof(T));
}

// Zero inputs hide bugs (a skipped multiply looks right), so a zero (of either sign) is drawn
// again; a range of only zero gives up after a few tries rather than looping forever.
template <typename T, typename Convert, typename IsZero>
void randomFloats(std::byte *out, const BufferSpec &b, std::uint64_t key, Convert convert, IsZero isZero)
{
    const double lo = b.init.low, span = b.init.high - b.init.low;
    for (std::uint64_t i = 0; i < b.count; ++i) {
        std::uint64_t z = mix(key + (i + 1) * kGamma);
        T v = convert(lo + span * unit(z));
        for (int attempt = 0; attempt < 8 && isZero(v); ++attempt) {
            z = mix(z);
            v = convert(lo + span * unit(z));
        }
        std::memcpy(out + i * sizeof(T), &v, sizeof(T));
    }
}

template <typename T>
void randomIntegers(std::byte *out, const BufferSpec &b, std::uint64_t key)
{
    const double lo = std::ceil(b.init.low), hi = std::floor(b.init.high);
    const std::uint64_t span = hi >= lo ? static_cast<std::uint64_t>(hi - lo) + 1 : 1;
    const auto base = static_cast<std::int64_t>(lo);
    for (std::uint64_t i = 0; i < b.count; ++i) {
        const auto v = static_cast<T>(base + static_cast<std::int64_t>(mix(key + (i + 1) * kGamma) % span));
        std::memcpy(out + i * sizeof(T), &v, sizeof(T));
    }
}

void randomBytes(const BufferSpec &b, std::uint64_t seed, Bytes &out)
{
    out.resize(b.bytes());
    const std::uint64_t key = mix(seed ^ fnv1a(b.name));
    std::byte *p = out.data();
    switch (b.dtype) {
    case ir::DType::F32:
        randomFloats<float>(p, b, key, [](double v) { return static_cast<float>(v); }, [](float v) { return v == 0.0f; });
        break;
    case ir::DType::F64:
        randomFloats<double>(p, b, key, [](double v) { return v; }, [](double v) { return v == 0.0; });
        break;
    case ir::DType::F16:
        randomFloats<std::uint16_t>(p, b, key, [](double v) { return floatToHalf(static_cast<float>(v)); },
                                    [](std::uint16_t h) { return (h & 0x7fffu) == 0; });
        break;
    case ir::DType::BF16:
        randomFloats<std::uint16_t>(p, b, key, [](double v) { return floatToBFloat16(static_cast<float>(v)); },
                                    [](std::uint16_t h) { return (h & 0x7fffu) == 0; });
        break;
    case ir::DType::I32: randomIntegers<std::int32_t>(p, b, key); break;
    case ir::DType::I64: randomIntegers<std::int64_t>(p, b, key); break;
    case ir::DType::Bool:
        for (std::uint64_t i = 0; i < b.count; ++i)
            p[i] = static_cast<std::byte>(mix(key + (i + 1) * kGamma) & 1u);
        break;
    }
}

} // namespace

void initialBytesInto(const LaunchPlan &plan, const BufferSpec &b, std::uint64_t seed, Bytes &out)
{
    switch (b.effectiveInit()) {
    case BufferInit::Kind::Random: randomBytes(b, seed, out); return;
    case BufferInit::Kind::Poison: out.assign(b.bytes(), std::byte{0xFF}); return;
    case BufferInit::Kind::CopyOf:
        if (const BufferSpec *src = plan.buffer(b.init.source); src && src->effectiveInit() != BufferInit::Kind::CopyOf) {
            initialBytesInto(plan, *src, seed, out);
            out.resize(b.bytes());
            return;
        }
        break;
    case BufferInit::Kind::Zero:
    case BufferInit::Kind::Default: break;
    }
    out.assign(b.bytes(), std::byte{0});
}

Bytes initialBytes(const LaunchPlan &plan, const BufferSpec &b, std::uint64_t seed)
{
    Bytes out;
    initialBytesInto(plan, b, seed, out);
    return out;
}

std::uint16_t floatToHalf(float value)
{
    const std::uint32_t x = std::bit_cast<std::uint32_t>(value);
    const std::uint32_t sign = (x >> 16) & 0x8000u;
    const std::uint32_t absx = x & 0x7fffffffu;
    if (absx >= 0x7f800000u) // inf or NaN
        return static_cast<std::uint16_t>(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0u));
    if (absx >= 0x477ff000u) // rounds to beyond 65504
        return static_cast<std::uint16_t>(sign | 0x7c00u);
    if (absx < 0x38800000u) { // subnormal half (or zero)
        const float f = std::bit_cast<float>(absx);
        const auto m = static_cast<std::uint32_t>(std::nearbyint(f * 16777216.0f)); // * 2^24
        return static_cast<std::uint16_t>(sign | m);
    }
    std::uint32_t mant = absx & 0x7fffffu;
    std::uint32_t exp = (absx >> 23) - 112;
    std::uint32_t h = (exp << 10) | (mant >> 13);
    const std::uint32_t rest = mant & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u)))
        ++h;
    return static_cast<std::uint16_t>(sign | h);
}

float halfToFloat(std::uint16_t bits)
{
    const std::uint32_t sign = (bits & 0x8000u) << 16;
    const std::uint32_t exp = (bits >> 10) & 0x1fu;
    const std::uint32_t mant = bits & 0x3ffu;
    if (exp == 0) {
        const float f = static_cast<float>(mant) / 16777216.0f;
        return sign ? -f : f;
    }
    if (exp == 31)
        return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
    return std::bit_cast<float>(sign | ((exp + 112) << 23) | (mant << 13));
}

std::uint16_t floatToBFloat16(float value)
{
    std::uint32_t x = std::bit_cast<std::uint32_t>(value);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return static_cast<std::uint16_t>((x >> 16) | 0x40u);
    x += 0x7fffu + ((x >> 16) & 1u);
    return static_cast<std::uint16_t>(x >> 16);
}

float bfloat16ToFloat(std::uint16_t bits)
{
    return std::bit_cast<float>(std::uint32_t(bits) << 16);
}

double loadElement(const std::byte *data, ir::DType dtype, std::uint64_t i)
{
    switch (dtype) {
    case ir::DType::F32: return loadAs<float>(data, i);
    case ir::DType::F64: return loadAs<double>(data, i);
    case ir::DType::F16: return halfToFloat(loadAs<std::uint16_t>(data, i));
    case ir::DType::BF16: return bfloat16ToFloat(loadAs<std::uint16_t>(data, i));
    case ir::DType::I32: return loadAs<std::int32_t>(data, i);
    case ir::DType::I64: return static_cast<double>(loadAs<std::int64_t>(data, i));
    case ir::DType::Bool: return loadAs<std::uint8_t>(data, i) ? 1.0 : 0.0;
    }
    return 0.0;
}

void storeElement(std::byte *data, ir::DType dtype, std::uint64_t i, double v)
{
    switch (dtype) {
    case ir::DType::F32: storeAs(data, i, static_cast<float>(v)); return;
    case ir::DType::F64: storeAs(data, i, v); return;
    case ir::DType::F16: storeAs(data, i, floatToHalf(static_cast<float>(v))); return;
    case ir::DType::BF16: storeAs(data, i, floatToBFloat16(static_cast<float>(v))); return;
    case ir::DType::I32: storeAs(data, i, static_cast<std::int32_t>(v)); return;
    case ir::DType::I64: storeAs(data, i, static_cast<std::int64_t>(v)); return;
    case ir::DType::Bool: storeAs(data, i, static_cast<std::uint8_t>(v != 0.0)); return;
    }
}

bool isPoison(const std::byte *data, ir::DType dtype, std::uint64_t index)
{
    const auto size = static_cast<std::uint64_t>(ir::dtypeSize(dtype));
    for (std::uint64_t k = 0; k < size; ++k)
        if (data[index * size + k] != std::byte{0xFF})
            return false;
    return true;
}

std::vector<double> toDoubles(const Bytes &bytes, ir::DType dtype)
{
    const auto n = bytes.size() / static_cast<std::size_t>(ir::dtypeSize(dtype));
    std::vector<double> out(n);
    for (std::size_t i = 0; i < n; ++i)
        out[i] = loadElement(bytes.data(), dtype, i);
    return out;
}

} // namespace stitch::runner
