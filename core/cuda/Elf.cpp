#include "core/cuda/Elf.h"

namespace stitch::cuda {

std::string ElfReader::cString(std::uint64_t at, std::uint64_t end) const
{
    std::string out;
    for (std::uint64_t i = at; i < end && i < m_bytes.size() && m_bytes[i] != '\0'; ++i)
        out.push_back(m_bytes[i]);
    return out;
}

Error malformedCubin(const std::string &why) { return makeError(ErrorKind::Parse, "malformed CUBIN: " + why); }

Result<std::vector<ElfSection>> readElfSections(std::span<const char> image)
{
    const ElfReader r(image);
    if (image.size() < 64 || std::memcmp(image.data(), "\x7f" "ELF", 4) != 0)
        return malformedCubin("not an ELF image");
    if (image[4] != 2 || image[5] != 1)
        return malformedCubin("not a little-endian ELF64 image");
    const auto shoff = r.read<std::uint64_t>(0x28);
    const auto shentsize = r.read<std::uint16_t>(0x3a);
    const auto shnum = r.read<std::uint16_t>(0x3c);
    const auto shstrndx = r.read<std::uint16_t>(0x3e);
    if (!shoff || !shentsize || !shnum || !shstrndx || *shentsize < 64 || *shstrndx >= *shnum ||
        !r.contains(*shoff, std::uint64_t(*shnum) * *shentsize))
        return malformedCubin("section header table out of bounds");

    std::vector<ElfSection> sections(*shnum);
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
    const ElfSection &names = sections[*shstrndx];
    for (std::uint16_t i = 0; i < *shnum; ++i)
        sections[i].name = r.cString(names.offset + nameOffsets[i], names.offset + names.size);
    return sections;
}

} // namespace stitch::cuda
