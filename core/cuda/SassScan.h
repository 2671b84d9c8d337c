#pragma once
// The machine code (SASS) of a CUBIN, scanned for what a performance model reads: each kernel's
// loops and the instruction mix of each. The PTX (rubric/PtxCounts) says what the source asks for;
// the SASS says what ptxas made of it under the register limit: where the spills went (local
// loads and stores inside the k-loop or outside it), accumulators moved between registers, the
// stall cycles of its static schedule.
//   CUBIN -> readElfSections -> .text.<kernel> -> 16-byte instructions -> loops (backward branches) -> SassMix
//
// sm_90 (Hopper) encoding, as far as the scan decodes it: 128 bits per instruction, two
// little-endian 64-bit words lo, hi.
//   opcode         lo bits 0-11 (the instruction; the high bits of it select the operand form)
//   registers      lo bits 16-23 (d), 24-31 (a), 32-39 (b); hi bits 0-7 (c); 255 is RZ
//   branch offset  signed, in bytes from the next instruction: lo bits 16-23 times 4 plus
//                  bits 32-81 of the 128 times 256
//   stall cycles   hi bits 41-44; operand reuse flags hi bits 58-60 (a, b, c)
//   scoreboards    hi bits 46-48 (the one its result sets), 49-51 (the one its source reads set),
//                  52-57 (the mask it waits on); 7: none
//   guard          lo bits 12-15 (15: @!PT, never executes)
//   access size    hi bits 9-11 of LDS, STS, LDL, STL, LDGSTS (4: 32-bit, 5: 64-bit, 6: 128-bit)
// Checked against `cuobjdump -sass` of the H200 runs' GEMM kernels (94 distinct opcodes, each one
// mnemonic; the targets of 641 branches; the registers and reuse flags of 6128 FFMAs; the dumps in
// bench/results/2026-11-30/run13-fused and run11-stream-k). Other architectures are not scanned.

#include "core/common/Result.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace stitch::cuda {

enum class SassOp : std::uint8_t {
    Ffma,         ///< FFMA, any operand form
    SharedLoad,   ///< LDS
    SharedStore,  ///< STS
    GlobalLoad,   ///< LDG
    GlobalStore,  ///< STG
    LocalLoad,    ///< LDL: a spill reload (or a local array)
    LocalStore,   ///< STL
    AsyncCopy,    ///< LDGSTS (cp.async)
    Move,         ///< MOV between registers or of a constant
    Barrier,      ///< BAR
    Branch,       ///< BRA
    WarpgroupMma, ///< HGMMA (wgmma)
    Other,
};

struct SassInstruction {
    std::uint32_t address = 0;
    std::uint16_t opcode = 0;  ///< the 12-bit opcode field
    SassOp op = SassOp::Other;
    std::int64_t target = -1;  ///< a branch's target address
    std::uint8_t d = 255, a = 255, b = 255, c = 255; ///< register fields as encoded (255: RZ)
    std::uint8_t reuse = 0;    ///< operand reuse flags: bit 0 a, bit 1 b, bit 2 c
    std::uint8_t stall = 0;    ///< cycles the static schedule waits after it
    std::uint8_t writeBarrier = 7; ///< scoreboard (0-5) its result releases; 7: none
    std::uint8_t readBarrier = 7;  ///< scoreboard (0-5) released once its sources are read; 7: none
    std::uint8_t waitMask = 0;     ///< scoreboards (bits 0-5) it waits for before it issues
    std::uint8_t accessBytes = 0;  ///< bytes per thread of an LDS, STS, LDL, STL or LDGSTS (0: not decoded)
    bool neverRuns = false;        ///< guarded by !PT (padding)
};

/// Counts over a range of instructions.
struct SassMix {
    int instructions = 0;
    int ffma = 0;
    int sharedLoads = 0, sharedStores = 0;
    int globalLoads = 0, globalStores = 0;
    int localLoads = 0, localStores = 0; ///< spill traffic
    int asyncCopies = 0;
    int moves = 0;
    int barriers = 0;
    int warpgroupMmas = 0;
    /// FFMAs with three register sources that write another register than the one they add
    /// (`FFMA R143, R28, R36, R40`): the accumulator moved to keep a register layout elsewhere.
    int movedAccumulators = 0;
    /// FFMAs that read all three register sources from one bank (sassBankConflict): the third read
    /// needs another cycle.
    int bankConflicts = 0;
    int stallCycles = 0; ///< sum of the encoded stall counts
};

struct SassLoop {
    std::uint32_t begin = 0; ///< address of the first instruction (the back edge's target)
    std::uint32_t end = 0;   ///< address of the back edge
    SassMix mix;             ///< every instruction in [begin, end], nested loops included
};

struct SassKernel {
    std::string mangledName;
    std::vector<SassInstruction> code;
    std::vector<SassLoop> loops; ///< by first instruction; back edges to one target make one loop
    SassMix all;

    /// The loop with the most FFMAs and warpgroup MMAs; then, while a loop nested in it holds the
    /// heavier part of a trip, that one (a stream-K GEMM's k-loop inside its loop over segments);
    /// the rule of rubric::hotLoopPtx, so both read the same loop. Null when there is no loop.
    const SassLoop *hotLoop() const;
};

/// Every kernel of an sm_90 CUBIN (`.text.<name>` sections). A malformed image, or machine code of
/// another architecture, gives an Error; the scan never reads out of bounds.
Result<std::vector<SassKernel>> scanSass(std::span<const char> cubin);

/// Bytes per sm_90 instruction (two 64-bit words).
inline constexpr std::uint32_t kSassInstructionBytes = 16;

/// One sm_90 instruction from its two 64-bit words, at `address` in its kernel.
SassInstruction decodeSass(std::uint32_t address, std::uint64_t lo, std::uint64_t hi);

/// An all-register FFMA whose three register sources all come from one bank (register number
/// modulo 2): a bank serves two reads in a cycle, the third waits one more. A source read from the
/// operand reuse cache does not count: the cache holds an operand slot's register when `previous`
/// (the instruction the warp issued before) set that slot's `.reuse` flag and read the same register
/// there. (A rule that counted two sources in one bank marked 90 % of the FFMAs of run 15's 16x8
/// GEMM kernels and 25 % of others that measure the same 2.90-2.94 ms; at two warps per scheduler
/// Nsight Compute shows the same cycles per instruction for both, docs/RUBRIC.md, session 20.)
bool sassBankConflict(const SassInstruction &previous, const SassInstruction &in);

/// The counts of `code` (in address order) between two addresses, both included.
SassMix sassMix(const std::vector<SassInstruction> &code, std::uint32_t from, std::uint32_t to);

} // namespace stitch::cuda
