// Static instruction counts of a kernel's PTX (.entry body): the whole body, its FMA-heaviest loop
// and its tensor-core loop (the most MMA FLOPs, one arm of each if/else).
//   CompileResult::ptx -> ptxEntryBody -> countPtx / hotLoopPtx / tensorLoopPtx -> PtxMix
//   -> instruction_mix (InstructionMix.cpp), KernelFacts' loop figures (the model)
#include "core/rubric/Dimensions.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <sstream>

namespace stitch::rubric {

namespace {

/// Adds one instruction line (already stripped of leading blanks) to the mix.
void countInstruction(PtxMix &m, std::string_view s);

/// The body's lines without blanks, comments and .loc, and each loop: a backward branch (its
/// line) to an earlier label (its line).
struct PtxLoops {
    std::vector<std::string> lines;
    std::vector<std::pair<std::size_t, std::size_t>> loops; ///< {label line, branch line}
};

/// The label a branch line jumps to ("$L__BB0_3"), empty for other lines.
std::string branchTarget(const std::string &l)
{
    const std::size_t bra = l.find("bra");
    if (bra == std::string::npos || l[0] == '$')
        return {};
    const std::size_t target = l.find('$', bra);
    if (target == std::string::npos)
        return {};
    return l.substr(target, l.find_first_of(" ;", target) - target);
}

bool isLabel(const std::string &l)
{
    return !l.empty() && l[0] == '$' && l.back() == ':';
}

PtxLoops scanLoops(const std::string &body)
{
    PtxLoops out;
    std::map<std::string, std::size_t> labels;
    std::istringstream in(body);
    std::string line;
    while (std::getline(in, line)) {
        const std::size_t i = line.find_first_not_of(" \t\r");
        if (i == std::string::npos || line.compare(i, 2, "//") == 0 || line.compare(i, 4, ".loc") == 0)
            continue;
        out.lines.push_back(line.substr(i));
        const std::string &l = out.lines.back();
        if (isLabel(l))
            labels[l.substr(0, l.size() - 1)] = out.lines.size() - 1;
        const std::string target = branchTarget(l);
        if (target.empty())
            continue;
        if (auto it = labels.find(target); it != labels.end()) // else a forward branch
            out.loops.emplace_back(it->second, out.lines.size() - 1);
    }
    return out;
}

/// Lines [from, to] of `lines` that an iteration runs when each if/else takes its shorter arm:
/// NVRTC lays an if/else out as `@p bra T; bra.uni E; T: ... bra.uni J; E: ... J:`. The
/// generated k-loops branch so between an interior tile's unguarded copy and a boundary tile's
/// guarded one (the longer arm), and every tile of a problem that fits the tiles takes the first.
std::vector<bool> commonPath(const std::vector<std::string> &lines, std::size_t from, std::size_t to)
{
    std::vector<bool> keep(lines.size(), false);
    std::fill(keep.begin() + static_cast<std::ptrdiff_t>(from), keep.begin() + static_cast<std::ptrdiff_t>(to) + 1,
              true);
    auto labelAt = [&](const std::string &name, std::size_t after) -> std::size_t {
        for (std::size_t j = after; j <= to; ++j)
            if (lines[j] == name + ":")
                return j;
        return 0;
    };
    auto instructions = [&](std::size_t a, std::size_t b) {
        PtxMix m;
        for (std::size_t j = a; j < b; ++j)
            if (keep[j])
                countInstruction(m, lines[j]);
        return m.total;
    };
    for (std::size_t i = from + 1; i + 1 <= to; ++i) {
        if (!keep[i] || lines[i].rfind("bra.uni", 0) != 0 || lines[i - 1][0] != '@')
            continue; // (an if/else inside a dropped arm stays dropped)
        const std::string thenLabel = branchTarget(lines[i - 1]), elseLabel = branchTarget(lines[i]);
        if (thenLabel.empty() || lines[i + 1] != thenLabel + ":")
            continue;
        const std::size_t elseAt = labelAt(elseLabel, i + 1);
        if (elseAt == 0 || lines[elseAt - 1].rfind("bra.uni", 0) != 0)
            continue;
        const std::size_t joinAt = labelAt(branchTarget(lines[elseAt - 1]), elseAt + 1);
        if (joinAt == 0)
            continue;
        const bool dropElse = instructions(i + 1, elseAt) <= instructions(elseAt, joinAt);
        const std::size_t a = dropElse ? elseAt : i + 1, b = dropElse ? joinAt : elseAt;
        std::fill(keep.begin() + static_cast<std::ptrdiff_t>(a), keep.begin() + static_cast<std::ptrdiff_t>(b), false);
        keep[i] = !dropElse; // `bra.uni E` runs only when the else arm does
    }
    return keep;
}

} // namespace

PtxMix countPtx(const std::string &body)
{
    PtxMix m;
    std::istringstream in(body);
    std::string line;
    while (std::getline(in, line)) {
        std::size_t i = line.find_first_not_of(" \t");
        if (i != std::string::npos)
            countInstruction(m, std::string_view(line).substr(i));
    }
    return m;
}

PtxMix hotLoopPtx(const std::string &body)
{
    const PtxLoops scan = scanLoops(body);
    std::vector<PtxMix> mixes;
    for (const auto &[from, to] : scan.loops) {
        PtxMix m;
        for (std::size_t k = from; k <= to; ++k)
            countInstruction(m, scan.lines[k]);
        mixes.push_back(m);
    }
    // The loop with the most FMAs; then, while a loop nested in it is the heavier part of a trip, that
    // one: a stream-K GEMM's k-loop inside its loop over tile segments, whose trip also holds the
    // epilogue (a fused GELU's erf polynomial can hold more FMAs than the k-loop's body). Statically a
    // nested loop is taken to run kNestedTrips times per trip of the loop around it, as compilers'
    // static block-frequency estimates do; its FMAs then outweigh the outer loop's own ones when
    // kNestedTrips x its FMAs >= the FMAs of the outer trip outside it.
    constexpr int kNestedTrips = 4;
    std::size_t best = mixes.size();
    for (std::size_t i = 0; i < mixes.size(); ++i)
        if (best == mixes.size() || mixes[i].fma > mixes[best].fma ||
            (mixes[i].fma == mixes[best].fma && mixes[i].total > mixes[best].total))
            best = i;
    if (best == mixes.size())
        return {};
    // The FMA-heaviest loop strictly inside loop `outer` with at least half of its FMAs, or none.
    auto heavyInner = [&](std::size_t outer) {
        const auto [from, to] = scan.loops[outer];
        std::size_t pick = mixes.size();
        for (std::size_t i = 0; i < mixes.size(); ++i) {
            const auto [f, t] = scan.loops[i];
            const bool nested = i != outer && f >= from && t <= to && (f != from || t != to);
            if (nested && mixes[i].fma > 0 && kNestedTrips * mixes[i].fma >= mixes[outer].fma - mixes[i].fma &&
                (pick == mixes.size() || mixes[i].fma > mixes[pick].fma))
                pick = i;
        }
        return pick;
    };
    for (std::size_t inner = heavyInner(best); inner != mixes.size(); inner = heavyInner(best))
        best = inner;
    return mixes[best];
}

PtxMix tensorLoopPtx(const std::string &body)
{
    const PtxLoops scan = scanLoops(body);
    PtxMix best;
    for (const auto &[from, to] : scan.loops) {
        const std::vector<bool> keep = commonPath(scan.lines, from, to);
        PtxMix m;
        for (std::size_t k = from; k <= to; ++k)
            if (keep[k])
                countInstruction(m, scan.lines[k]);
        if (m.mmaFlops > best.mmaFlops)
            best = m;
    }
    return best;
}

namespace {

/// The shape token of an MMA opcode ("m16n8k8", "m64n256k8") and its m, n, k; empty when absent.
std::string_view mmaShape(std::string_view op, int (&dims)[3])
{
    for (std::size_t at = op.find(".m"); at != std::string_view::npos; at = op.find(".m", at + 1)) {
        const std::string_view token = op.substr(at + 1, op.find('.', at + 1) - at - 1);
        const char *p = token.data() + 1, *end = token.data() + token.size();
        bool ok = true;
        for (int d = 0; d < 3 && ok; ++d) {
            auto [next, ec] = std::from_chars(p, end, dims[d]);
            ok = ec == std::errc() && (d == 2 ? next == end : next != end && *next == "nk"[d]);
            p = next + 1;
        }
        if (ok)
            return token;
    }
    return {};
}

void countInstruction(PtxMix &m, std::string_view s)
{
    static const char *specials[] = {"ex2", "lg2", "rsqrt", "sqrt", "rcp", "sin", "cos", "tanh"};
    static const char *integerOps[] = {"add", "sub", "mul", "mad", "shl", "shr", "and", "or",   "xor", "not",
                                       "div", "rem", "min", "max", "neg", "abs", "cvt", "selp", "setp"};
    if (s.empty() || s[0] == '.' || s[0] == '/' || s[0] == '$' || s[0] == '{' || s[0] == '}')
        return;
    if (s[0] == '@') { // predicate guard
        const std::size_t sp = s.find_first_of(" \t");
        if (sp == std::string_view::npos)
            return;
        s.remove_prefix(s.find_first_not_of(" \t", sp));
    }
    const std::size_t end = s.find_first_of(" \t;");
    const std::string_view op = s.substr(0, end);
    if (op.empty())
        return;
    ++m.total;
    const std::string_view base = op.substr(0, op.find('.'));
    const bool isFloat = op.find(".f32") != std::string_view::npos || op.find(".f64") != std::string_view::npos ||
                         op.find(".f16") != std::string_view::npos;
    const bool vec = op.find(".v2") != std::string_view::npos || op.find(".v4") != std::string_view::npos;
    if (base == "mma" || op.rfind("wgmma.mma_async", 0) == 0) {
        // 2 m n k FLOPs per MMA; a wgmma is one instruction of the warpgroup's 4 warps, each issues it.
        const bool warpgroup = base == "wgmma";
        int dims[3] = {0, 0, 0};
        const std::string_view shape = mmaShape(op, dims);
        ++m.mma;
        m.mmaFlops += 2.0 * dims[0] * dims[1] * dims[2] / (warpgroup ? 4 : 1);
        if (m.mmaShape.empty() && !shape.empty())
            m.mmaShape = std::string(warpgroup ? "wgmma.mma_async " : "mma.sync ") + std::string(shape);
    } else if (base == "wgmma" || base == "bar" || base == "barrier" || base == "fence" ||
               op.rfind("cp.async.wait", 0) == 0 || op.rfind("cp.async.commit", 0) == 0 ||
               op.rfind("cp.async.bulk.wait", 0) == 0 || op.rfind("cp.async.bulk.commit", 0) == 0) {
        ++m.syncs; // wgmma.fence / commit_group / wait_group, barriers, proxy fences, cp.async groups
    } else if (base == "ldmatrix") {
        // .x1 / .x2 / .x4: 8x8 matrices of 16-bit values, 128 bytes each, one wavefront each.
        ++m.sharedLoads;
        m.sharedLoadWavefronts += op.find(".x4") != std::string_view::npos   ? 4
                                  : op.find(".x2") != std::string_view::npos ? 2
                                                                             : 1;
    } else if ((base == "fma" || base == "mad") && isFloat) {
        ++m.fma;
    } else if (base == "ld" || base == "st") {
        const bool shared = op.find(".shared") != std::string_view::npos;
        const bool global = op.find(".global") != std::string_view::npos;
        if (shared) {
            ++(base == "ld" ? m.sharedLoads : m.sharedStores);
            if (base == "ld") { // a warp's bytes over the 128 a wavefront serves, conflicts aside
                const int width = op.find(".v4") != std::string_view::npos   ? 4
                                  : op.find(".v2") != std::string_view::npos ? 2
                                                                             : 1;
                const bool wide = op.find("64") != std::string_view::npos;
                m.sharedLoadWavefronts += std::max(1, width * (wide ? 2 : 1));
            }
        }
        if (global) {
            ++(base == "ld" ? m.globalLoads : m.globalStores);
            m.globalVector += vec ? 1 : 0;
        }
    } else if (std::find(std::begin(specials), std::end(specials), base) != std::end(specials)) {
        ++m.special;
    } else if (base == "bra") {
        ++m.branches;
    } else if (base == "cvt" && op.find(".tf32") != std::string_view::npos) {
        ++m.tf32Conversions;
    } else if (isFloat && base != "cvt" && base != "setp" && base != "selp" && base != "mov") {
        ++m.floatOther;
    } else if (std::find(std::begin(integerOps), std::end(integerOps), base) != std::end(integerOps) && !isFloat) {
        ++m.integer;
    }
}

} // namespace

} // namespace stitch::rubric
