#include "core/cuda/CubinInfo.h"

#include "core/cuda/Elf.h"

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

} // namespace

Result<std::vector<KernelResources>> readCubinResources(std::span<const char> cubin, const std::string &arch)
{
    auto read = readElfSections(cubin);
    if (!read.ok())
        return read.error();
    const std::vector<ElfSection> &sections = *read;
    const ElfReader r(cubin);

    // Symbol index -> name, for the .nv.info attributes keyed by symbol.
    std::map<std::uint32_t, std::string> symbols;
    for (const ElfSection &s : sections) {
        if (s.type != kSymbolTableType || s.entrySize < 24 || s.link >= sections.size())
            continue;
        if (!r.contains(s.offset, s.size))
            return malformedCubin("symbol table out of bounds");
        const ElfSection &strings = sections[s.link];
        for (std::uint64_t i = 0; i * s.entrySize + 24 <= s.size; ++i) {
            const auto nameOffset = *r.read<std::uint32_t>(s.offset + i * s.entrySize);
            symbols[static_cast<std::uint32_t>(i)] = r.cString(strings.offset + nameOffset, strings.offset + strings.size);
        }
    }

    std::vector<KernelResources> kernels;
    std::map<std::string, std::size_t> byName;
    for (const ElfSection &s : sections) {
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

    auto forEachAttribute = [&](const ElfSection &s, auto &&visit) -> std::optional<Error> {
        if (!r.contains(s.offset, s.size))
            return malformedCubin(s.name + " out of bounds");
        std::uint64_t p = s.offset;
        const std::uint64_t end = s.offset + s.size;
        while (p + 4 <= end) {
            const auto format = *r.read<std::uint8_t>(p);
            const auto attribute = *r.read<std::uint8_t>(p + 1);
            const auto half = *r.read<std::uint16_t>(p + 2);
            p += 4;
            if (format == kFormatSized) {
                if (end - p < half)
                    return malformedCubin(s.name + " attribute overruns its section");
                visit(attribute, p, half);
                p += half;
            } else if (format == kFormatNone || format == kFormatByte || format == kFormatHalf) {
                visit(attribute, p - 2, 0u + (format == kFormatNone ? 0u : half));
            } else {
                return malformedCubin(s.name + " has an attribute of unknown format " + std::to_string(format));
            }
        }
        return std::nullopt;
    };

    // sm_90 images carry `.nv.shared.reserved.0`; each kernel's `.nv.shared.<kernel>` then starts
    // with the 1 KiB the system reserves per block, which ptxas does not count as the kernel's.
    const bool reservedWindow = std::any_of(sections.begin(), sections.end(), [](const ElfSection &s) {
        return s.name.rfind(".nv.shared.reserved.", 0) == 0;
    });
    constexpr std::uint64_t kReservedBytes = 1024;
    for (const ElfSection &s : sections) {
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
