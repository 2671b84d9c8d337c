#include "core/cuda/CubinInfo.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <string_view>

namespace stitch::cuda {

namespace {

constexpr std::uint8_t kFormatNone = 0x01, kFormatByte = 0x02, kFormatHalf = 0x03, kFormatSized = 0x04;
constexpr std::uint8_t kAttrFrameSize = 0x11, kAttrRegCount = 0x2f, kAttrNumBarriers = 0x4c;
constexpr std::uint32_t kSymbolTableType = 2;

struct Section {
    std::string name;
    std::uint32_t type = 0;
    std::uint64_t offset = 0, size = 0;
    std::uint32_t link = 0, info = 0;
    std::uint64_t entrySize = 0;
};

/// Bounds-checked little-endian reads over the image.
class Reader {
public:
    explicit Reader(std::span<const char> bytes) : m_bytes(bytes) {}
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
    std::string cString(std::uint64_t at, std::uint64_t end) const
    {
        std::string out;
        for (std::uint64_t i = at; i < end && i < m_bytes.size() && m_bytes[i] != '\0'; ++i)
            out.push_back(m_bytes[i]);
        return out;
    }

private:
    std::span<const char> m_bytes;
};

Error malformed(const std::string &why) { return makeError(ErrorKind::Parse, "malformed CUBIN: " + why); }

} // namespace

Result<std::vector<KernelResources>> readCubinResources(std::span<const char> cubin, const std::string &arch)
{
    const Reader r(cubin);
    if (cubin.size() < 64 || std::memcmp(cubin.data(), "\x7f" "ELF", 4) != 0)
        return malformed("not an ELF image");
    if (cubin[4] != 2 || cubin[5] != 1)
        return malformed("not a little-endian ELF64 image");
    const auto shoff = r.read<std::uint64_t>(0x28);
    const auto shentsize = r.read<std::uint16_t>(0x3a);
    const auto shnum = r.read<std::uint16_t>(0x3c);
    const auto shstrndx = r.read<std::uint16_t>(0x3e);
    if (!shoff || !shentsize || !shnum || !shstrndx || *shentsize < 64 || *shstrndx >= *shnum ||
        !r.contains(*shoff, std::uint64_t(*shnum) * *shentsize))
        return malformed("section header table out of bounds");

    std::vector<Section> sections(*shnum);
    std::vector<std::uint32_t> nameOffsets(*shnum);
    for (std::uint16_t i = 0; i < *shnum; ++i) {
        const std::uint64_t h = *shoff + std::uint64_t(i) * *shentsize;
        nameOffsets[i] = *r.read<std::uint32_t>(h);
        sections[i].type = *r.read<std::uint32_t>(h + 4);
        sections[i].offset = *r.read<std::uint64_t>(h + 0x18);
        sections[i].size = *r.read<std::uint64_t>(h + 0x20);
        sections[i].link = *r.read<std::uint32_t>(h + 0x28);
        sections[i].info = *r.read<std::uint32_t>(h + 0x2c);
        sections[i].entrySize = *r.read<std::uint64_t>(h + 0x38);
    }
    const Section &names = sections[*shstrndx];
    for (std::uint16_t i = 0; i < *shnum; ++i)
        sections[i].name = r.cString(names.offset + nameOffsets[i], names.offset + names.size);

    // Symbol index -> name, for the .nv.info attributes keyed by symbol.
    std::map<std::uint32_t, std::string> symbols;
    for (const Section &s : sections) {
        if (s.type != kSymbolTableType || s.entrySize < 24 || s.link >= sections.size())
            continue;
        if (!r.contains(s.offset, s.size))
            return malformed("symbol table out of bounds");
        const Section &strings = sections[s.link];
        for (std::uint64_t i = 0; i * s.entrySize + 24 <= s.size; ++i) {
            const auto nameOffset = *r.read<std::uint32_t>(s.offset + i * s.entrySize);
            symbols[static_cast<std::uint32_t>(i)] = r.cString(strings.offset + nameOffset, strings.offset + strings.size);
        }
    }

    std::vector<KernelResources> kernels;
    std::map<std::string, std::size_t> byName;
    for (const Section &s : sections) {
        constexpr std::string_view text = ".text.";
        if (s.name.rfind(text, 0) != 0)
            continue;
        KernelResources k;
        k.mangledName = s.name.substr(text.size());
        k.name = shortKernelName(k.mangledName);
        k.arch = arch;
        k.spillStoreBytes = k.spillLoadBytes = -1; // not recorded in machine code
        byName[k.mangledName] = kernels.size();
        kernels.push_back(std::move(k));
    }

    auto forEachAttribute = [&](const Section &s, auto &&visit) -> std::optional<Error> {
        if (!r.contains(s.offset, s.size))
            return malformed(s.name + " out of bounds");
        std::uint64_t p = s.offset;
        const std::uint64_t end = s.offset + s.size;
        while (p + 4 <= end) {
            const auto format = *r.read<std::uint8_t>(p);
            const auto attribute = *r.read<std::uint8_t>(p + 1);
            const auto half = *r.read<std::uint16_t>(p + 2);
            p += 4;
            if (format == kFormatSized) {
                if (end - p < half)
                    return malformed(s.name + " attribute overruns its section");
                visit(attribute, p, half);
                p += half;
            } else if (format == kFormatNone || format == kFormatByte || format == kFormatHalf) {
                visit(attribute, p - 2, 0u + (format == kFormatNone ? 0u : half));
            } else {
                return malformed(s.name + " has an attribute of unknown format " + std::to_string(format));
            }
        }
        return std::nullopt;
    };

    // sm_90 images carry `.nv.shared.reserved.0`; each kernel's `.nv.shared.<kernel>` then starts
    // with the 1 KiB the system reserves per block, which ptxas does not count as the kernel's.
    const bool reservedWindow = std::any_of(sections.begin(), sections.end(), [](const Section &s) {
        return s.name.rfind(".nv.shared.reserved.", 0) == 0;
    });
    constexpr std::uint64_t kReservedBytes = 1024;
    for (const Section &s : sections) {
        if (s.name == ".nv.info") {
            auto error = forEachAttribute(s, [&](std::uint8_t attribute, std::uint64_t at, std::uint32_t size) {
                if ((attribute != kAttrRegCount && attribute != kAttrFrameSize) || size < 8)
                    return;
                const auto symbol = symbols.find(*r.read<std::uint32_t>(at));
                if (symbol == symbols.end() || !byName.contains(symbol->second))
                    return;
                KernelResources &k = kernels[byName[symbol->second]];
                const int value = static_cast<int>(*r.read<std::uint32_t>(at + 4));
                (attribute == kAttrRegCount ? k.registers : k.stackFrameBytes) = value;
            });
            if (error)
                return *error;
        } else if (s.name.rfind(".nv.info.", 0) == 0) {
            auto kernel = byName.find(s.name.substr(9));
            if (kernel == byName.end())
                continue;
            KernelResources &k = kernels[kernel->second];
            auto error = forEachAttribute(s, [&](std::uint8_t attribute, std::uint64_t at, std::uint32_t value) {
                if (attribute == kAttrNumBarriers)
                    k.barriers = static_cast<int>(value & 0xff);
                (void)at;
            });
            if (error)
                return *error;
        } else if (s.name.rfind(".nv.shared.", 0) == 0) {
            auto kernel = byName.find(s.name.substr(11));
            if (kernel != byName.end())
                kernels[kernel->second].sharedBytes =
                    static_cast<int>(reservedWindow ? (s.size > kReservedBytes ? s.size - kReservedBytes : 0) : s.size);
        }
    }
    return kernels;
}

} // namespace stitch::cuda
