#include "core/cuda/SassScan.h"

#include "core/cuda/Elf.h"

#include <algorithm>
#include <map>
#include <string_view>

namespace stitch::cuda {

namespace {

constexpr std::uint32_t kElfFlagsOffset = 0x30;
constexpr int kScannedSm = 90;

/// The instruction family: the opcode without the operand-form bits (9-11), as the listed sm_90
/// opcodes show (FFMA 0x223 register, 0x423 immediate, 0xe23 uniform: 0x023).
SassOp classify(std::uint16_t opcode)
{
    switch (opcode & 0x1ff) {
    case 0x023: return SassOp::Ffma;
    case 0x184: return SassOp::SharedLoad;
    case 0x188: return SassOp::SharedStore;
    case 0x181: return SassOp::GlobalLoad;
    case 0x186: return SassOp::GlobalStore;
    case 0x183: return SassOp::LocalLoad;   // LDL 0x983 (520/576 spill bytes of a test kernel: 130 STL, 144 LDL)
    case 0x187: return SassOp::LocalStore;  // STL 0x387
    case 0x1ae: return SassOp::AsyncCopy;
    case 0x002: return SassOp::Move;        // MOV 0x202 / 0x802 / 0xc02 (not UMOV 0x882)
    case 0x11d: return SassOp::Barrier;
    case 0x147: return SassOp::Branch;
    case 0x1f0: return SassOp::WarpgroupMma;
    default: return SassOp::Other;
    }
}

} // namespace

SassInstruction decodeSass(std::uint32_t address, std::uint64_t lo, std::uint64_t hi)
{
    SassInstruction in;
    in.address = address;
    in.opcode = static_cast<std::uint16_t>(lo & 0xfff);
    in.op = classify(in.opcode);
    in.d = static_cast<std::uint8_t>(lo >> 16);
    in.a = static_cast<std::uint8_t>(lo >> 24);
    in.b = static_cast<std::uint8_t>(lo >> 32);
    in.c = static_cast<std::uint8_t>(hi);
    in.stall = static_cast<std::uint8_t>((hi >> 41) & 0xf);
    in.reuse = static_cast<std::uint8_t>((hi >> 58) & 0x7);
    in.writeBarrier = static_cast<std::uint8_t>((hi >> 46) & 0x7);
    in.readBarrier = static_cast<std::uint8_t>((hi >> 49) & 0x7);
    in.waitMask = static_cast<std::uint8_t>((hi >> 52) & 0x3f);
    in.neverRuns = ((lo >> 12) & 0xf) == 0xf;
    if (in.op == SassOp::SharedLoad || in.op == SassOp::SharedStore || in.op == SassOp::LocalLoad ||
        in.op == SassOp::LocalStore || in.op == SassOp::AsyncCopy) {
        const int size = static_cast<int>((hi >> 9) & 0x7);
        in.accessBytes = static_cast<std::uint8_t>(size >= 4 ? 4 << (size - 4) : 1 + (size >> 1));
    }
    if (in.op == SassOp::Branch) {
        // 58 bits: lo 16-23 (x4), then lo 32-63 and hi 0-25 (x256), sign-extended.
        const std::uint64_t high = (lo >> 32) | ((hi & ((std::uint64_t(1) << 26) - 1)) << 32);
        std::uint64_t raw = ((lo >> 16) & 0xff) << 2 | high << 8;
        constexpr int kBits = 58;
        std::int64_t offset = static_cast<std::int64_t>(raw & ((std::uint64_t(1) << kBits) - 1));
        if (offset & (std::int64_t(1) << (kBits - 1)))
            offset -= std::int64_t(1) << kBits;
        in.target = static_cast<std::int64_t>(address) + static_cast<std::int64_t>(kSassInstructionBytes) + offset;
    }
    return in;
}

bool sassBankConflict(const SassInstruction &previous, const SassInstruction &in)
{
    if (in.op != SassOp::Ffma || in.opcode != 0x223) // only the all-register form has a, b and c in registers
        return false;
    const std::uint8_t sources[3] = {in.a, in.b, in.c};
    const std::uint8_t cached[3] = {previous.a, previous.b, previous.c};
    int banks[2] = {0, 0};
    for (int i = 0; i < 3; ++i) {
        if (sources[i] == 255) // RZ: no read
            return false;
        if ((previous.reuse >> i & 1) && cached[i] == sources[i])
            return false; // from the reuse cache: at most two reads left
        ++banks[sources[i] % 2];
    }
    return banks[0] == 3 || banks[1] == 3;
}

namespace {

void count(SassMix &m, const SassInstruction &previous, const SassInstruction &in)
{
    ++m.instructions;
    m.stallCycles += in.stall;
    switch (in.op) {
    case SassOp::Ffma: {
        ++m.ffma;
        if (in.opcode != 0x223) // only the all-register form has a, b and c in registers
            break;
        if (in.d != in.c && in.c != 255)
            ++m.movedAccumulators;
        if (sassBankConflict(previous, in))
            ++m.bankConflicts;
        break;
    }
    case SassOp::SharedLoad: ++m.sharedLoads; break;
    case SassOp::SharedStore: ++m.sharedStores; break;
    case SassOp::GlobalLoad: ++m.globalLoads; break;
    case SassOp::GlobalStore: ++m.globalStores; break;
    case SassOp::LocalLoad: ++m.localLoads; break;
    case SassOp::LocalStore: ++m.localStores; break;
    case SassOp::AsyncCopy: ++m.asyncCopies; break;
    case SassOp::Move: ++m.moves; break;
    case SassOp::Barrier: ++m.barriers; break;
    case SassOp::WarpgroupMma: ++m.warpgroupMmas; break;
    case SassOp::Branch:
    case SassOp::Other: break;
    }
}

} // namespace

SassMix sassMix(const std::vector<SassInstruction> &code, std::uint32_t from, std::uint32_t to)
{
    // `code` is in address order (as scanSass decodes it): only the range is visited, so the mixes
    // of all loops cost one pass each over their own instructions.
    SassMix m;
    auto at = std::lower_bound(code.begin(), code.end(), from,
                               [](const SassInstruction &in, std::uint32_t a) { return in.address < a; });
    // The range's first instruction is a loop's head: the warp arrives from the back edge (a branch,
    // no reuse flags), so nothing before it counts as cached.
    SassInstruction previous;
    for (; at != code.end() && at->address <= to; ++at) {
        count(m, previous, *at);
        previous = *at;
    }
    return m;
}

const SassLoop *SassKernel::hotLoop() const
{
    // As rubric::hotLoopPtx: a nested loop is taken to run kNestedTrips times per trip of the loop
    // around it, so it is the hot one when kNestedTrips x its work >= the rest of the outer trip.
    constexpr int kNestedTrips = 4;
    auto work = [](const SassLoop &l) { return l.mix.ffma + l.mix.warpgroupMmas; };
    const SassLoop *best = nullptr;
    for (const auto &l : loops)
        if (!best || work(l) > work(*best) || (work(l) == work(*best) && l.mix.instructions > best->mix.instructions))
            best = &l;
    if (!best)
        return nullptr;
    for (;;) {
        const SassLoop *pick = nullptr;
        for (const auto &l : loops) {
            const bool nested = &l != best && l.begin >= best->begin && l.end <= best->end;
            if (nested && work(l) > 0 && kNestedTrips * work(l) >= work(*best) - work(l) && (!pick || work(l) > work(*pick)))
                pick = &l;
        }
        if (!pick)
            return best;
        best = pick;
    }
}

Result<std::vector<SassKernel>> scanSass(std::span<const char> cubin)
{
    auto sections = readElfSections(cubin);
    if (!sections.ok())
        return sections.error();
    const ElfReader r(cubin);
    const auto flags = r.read<std::uint32_t>(kElfFlagsOffset);
    const int sm = flags ? static_cast<int>((*flags >> 8) & 0xff) : 0;
    if (sm != kScannedSm)
        return makeError(ErrorKind::Unsupported, "the SASS scan reads sm_90 machine code; this CUBIN is for sm_" +
                                                     std::to_string(sm));
    std::vector<SassKernel> kernels;
    for (const ElfSection &s : *sections) {
        constexpr std::string_view text = ".text.";
        if (s.name.rfind(text, 0) != 0)
            continue;
        if (!r.contains(s.offset, s.size) || s.size % kSassInstructionBytes != 0)
            return malformedCubin(s.name + " is out of bounds or not a whole number of instructions");
        SassKernel k;
        k.mangledName = s.name.substr(text.size());
        for (std::uint64_t at = 0; at < s.size; at += kSassInstructionBytes) {
            const auto lo = *r.read<std::uint64_t>(s.offset + at);
            const auto hi = *r.read<std::uint64_t>(s.offset + at + 8);
            const SassInstruction previous = k.code.empty() ? SassInstruction{} : k.code.back();
            k.code.push_back(decodeSass(static_cast<std::uint32_t>(at), lo, hi));
            count(k.all, previous, k.code.back());
        }
        // A back edge (a branch to itself or before it; not the branch-to-self after EXIT) closes
        // the loop that starts at its target; back edges to one target are one loop.
        std::map<std::uint32_t, std::uint32_t> ends;
        for (const auto &in : k.code)
            if (in.op == SassOp::Branch && in.target >= 0 && in.target < static_cast<std::int64_t>(in.address)) {
                auto &end = ends[static_cast<std::uint32_t>(in.target)];
                end = std::max(end, in.address);
            }
        for (const auto &[begin, end] : ends)
            k.loops.push_back({begin, end, sassMix(k.code, begin, end)});
        kernels.push_back(std::move(k));
    }
    return kernels;
}

} // namespace stitch::cuda
