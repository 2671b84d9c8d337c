#pragma once
// Static instruction counts of a kernel's PTX (PtxCounts.cpp): the whole entry, its hot loop, its
// tensor-core loop. analyzeProgram counts each compiled kernel once (KernelFacts::ptxMix, ptxLoop);
// the instruction-mix dimension and the calibration columns read those.

#include <string>

namespace stitch::rubric {

/// Instruction counts of one kernel's PTX body (static: each instruction once, loops unrolled by ptxas' input).
struct PtxMix {
    int total = 0;
    int fma = 0;        ///< fma.* and mad.* on floats
    int floatOther = 0; ///< other float arithmetic (tensor-core MMAs apart)
    int sharedLoads = 0, sharedStores = 0; ///< ld.shared and ldmatrix; st.shared
    int globalLoads = 0, globalStores = 0;
    int globalVector = 0; ///< .v2 / .v4 global loads and stores
    int special = 0;      ///< ex2, lg2, rsqrt, sqrt, rcp, sin, cos, tanh
    int integer = 0;      ///< integer and bit arithmetic (index math)
    int branches = 0;     ///< bra
    int mma = 0;          ///< tensor-core MMAs: mma.sync, wgmma.mma_async
    /// FLOPs of those MMAs per warp: 2 m n k of each shape (m16n8k8: 2048); a wgmma (m64nNk8) is one
    /// instruction of a warpgroup's 4 warps, each issuing it, so a quarter of 2 x 64 x N x 8 each.
    double mmaFlops = 0;
    std::string mmaShape;            ///< the first MMA's, e.g. "wgmma.mma_async m64n256k8"
    double sharedLoadWavefronts = 0; ///< shared-load wavefronts without conflicts: a warp's bytes / 128, at least 1
    int tf32Conversions = 0;         ///< cvt.rna.tf32.f32 (operand rounding for TF32 MMAs)
    /// Waits, fences and barriers: wgmma.fence / commit_group / wait_group, cp.async commit / wait,
    /// bar.sync, fence.*, barrier.*
    int syncs = 0;
};
PtxMix countPtx(const std::string &entryBody);
/// The mix of the loop (a backward branch to an earlier label) with the most FMAs, or of the
/// innermost loop nested in it that, taken to run 4 trips per outer trip, holds most of them (a
/// stream-K GEMM's k-loop inside its segment loop, a fused epilogue after it); empty when none.
PtxMix hotLoopPtx(const std::string &entryBody);
/// The mix of one trip of the loop with the most MMA FLOPs, each if/else counted by its shorter arm
/// (NVRTC's `@p bra T; bra.uni E; T: ... bra.uni J; E: ... J:`: the generated k-loops' unguarded
/// interior-tile copy against the guarded boundary one); empty when no loop issues MMAs.
PtxMix tensorLoopPtx(const std::string &entryBody);

} // namespace stitch::rubric
