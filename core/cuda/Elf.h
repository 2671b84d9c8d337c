#pragma once
// The section table of an ELF64 little-endian image (a CUBIN), read with bounds checks.
//   CUBIN bytes -> readElfSections -> CubinInfo (resources), SassScan (machine code)

#include "core/common/Result.h"

#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace stitch::cuda {

struct ElfSection {
    std::string name;
    std::uint32_t type = 0;
    std::uint64_t offset = 0, size = 0;
    std::uint32_t link = 0, info = 0;
    std::uint64_t entrySize = 0;
};

/// Bounds-checked little-endian reads over an image.
class ElfReader {
public:
    explicit ElfReader(std::span<const char> bytes) : m_bytes(bytes) {}
    template <typename T> std::optional<T> read(std::uint64_t at) const
    {
        if (at > m_bytes.size() || m_bytes.size() - at < sizeof(T))
            return std::nullopt;
        T v;
        std::memcpy(&v, m_bytes.data() + at, sizeof(T));
        return v;
    }
    bool contains(std::uint64_t at, std::uint64_t size) const
    {
        return at <= m_bytes.size() && m_bytes.size() - at >= size;
    }
    std::string cString(std::uint64_t at, std::uint64_t end) const;

private:
    std::span<const char> m_bytes;
};

/// "malformed CUBIN: <why>", the error every reader of the image gives.
Error malformedCubin(const std::string &why);

/// Every section header with its name; an Error when the image is not ELF64 little-endian or its
/// header table lies outside it.
Result<std::vector<ElfSection>> readElfSections(std::span<const char> image);

} // namespace stitch::cuda
