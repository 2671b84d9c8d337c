// Instruction mix from the PTX of each kernel's .entry: FMA share, shared loads per FMA, vector
// (v2/v4) against scalar global memory instructions, special functions and integer index math.
// The counts are static (each instruction once); the hot loops are unrolled in the PTX already.
//   CompileResult::ptx -> ptxEntryBody -> countPtx -> PtxMix -> score
#include "core/rubric/Dimensions.h"

#include <algorithm>
#include <map>
#include <sstream>

namespace stitch::rubric {

namespace {

/// Adds one instruction line (already stripped of its predicate) to the mix.
void countInstruction(PtxMix &m, std::string_view s);

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
    std::vector<std::string> lines;
    std::istringstream in(body);
    std::string line;
    std::map<std::string, std::size_t> labels;
    PtxMix best;
    while (std::getline(in, line)) {
        std::size_t i = line.find_first_not_of(" \t");
        if (i == std::string::npos)
            continue;
        lines.push_back(line.substr(i));
        const std::string &l = lines.back();
        if (l[0] == '$' && l.back() == ':')
            labels[l.substr(0, l.size() - 1)] = lines.size() - 1;
        const std::size_t bra = l.find("bra");
        if (bra == std::string::npos || l[0] == '$')
            continue;
        const std::size_t target = l.find('$', bra);
        if (target == std::string::npos)
            continue;
        const std::string name = l.substr(target, l.find_first_of(" ;", target) - target);
        auto it = labels.find(name);
        if (it == labels.end())
            continue; // a forward branch
        PtxMix m;
        for (std::size_t k = it->second; k < lines.size(); ++k)
            countInstruction(m, lines[k]);
        if (m.fma > best.fma || (m.fma == best.fma && m.total > best.total))
            best = m;
    }
    return best;
}

MixFigures instructionMixFigures(const KernelFacts &k, const ProgramFacts &p)
{
    MixFigures f;
    const PtxMix m = countPtx(k.ptxBody);
    const PtxMix hot = hotLoopPtx(k.ptxBody);
    f.hotLoop = hot.total > 0 && hot.fma > 0;
    const PtxMix &core = f.hotLoop ? hot : m; // the FMA-heaviest loop, where the time goes
    const int global = m.globalLoads + m.globalStores;
    f.fmaShare = core.total ? double(core.fma) / core.total : 0;
    f.ldsPerFma = core.fma ? double(core.sharedLoads) / core.fma : 0;
    f.vectorShare = global ? double(m.globalVector) / global : 1;
    f.integerShare = m.total ? double(m.integer) / m.total : 0;
    f.computeBound = (k.strategy == schedule::Strategy::Gemm && !k.splitSum) ||
                     k.flops / std::max(k.trafficBytes, 1.0) >= ridgePoint(*p.gpu);
    return f;
}

double computeMixScore(double fmaShare, double ldsPerFma)
{
    const double fmaPart = std::min(1.0, fmaShare / 0.5);
    const double ldsPenalty = std::min(2.0, std::max(0.0, ldsPerFma - 0.25) * 4);
    return 5 * fmaPart - ldsPenalty;
}

double memoryMixScore(double vectorShare, double integerShare)
{
    const double vecPenalty = 2 * (1 - vectorShare);
    const double intPenalty = std::min(2.0, std::max(0.0, integerShare - 0.3) * 5);
    return 5 - vecPenalty - intPenalty;
}

namespace {

void countInstruction(PtxMix &m, std::string_view s)
{
    static const char *specials[] = {"ex2", "lg2", "rsqrt", "sqrt", "rcp", "sin", "cos", "tanh"};
    static const char *integerOps[] = {"add", "sub", "mul", "mad", "shl", "shr", "and", "or",   "xor", "not",
                                       "div", "rem", "min", "max", "neg", "abs", "cvt", "selp", "setp"};
    {
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
        if ((base == "fma" || base == "mad") && isFloat) {
            ++m.fma;
        } else if (base == "ld" || base == "st") {
            const bool shared = op.find(".shared") != std::string_view::npos;
            const bool global = op.find(".global") != std::string_view::npos;
            if (shared)
                ++(base == "ld" ? m.sharedLoads : m.sharedStores);
            if (global) {
                ++(base == "ld" ? m.globalLoads : m.globalStores);
                m.globalVector += vec ? 1 : 0;
            }
        } else if (std::find(std::begin(specials), std::end(specials), base) != std::end(specials)) {
            ++m.special;
        } else if (base == "bra") {
            ++m.branches;
        } else if (isFloat && base != "cvt" && base != "setp" && base != "selp" && base != "mov") {
            ++m.floatOther;
        } else if (std::find(std::begin(integerOps), std::end(integerOps), base) != std::end(integerOps) && !isFloat) {
            ++m.integer;
        }
    }
}

class InstructionMix final : public KernelDimension {
public:
    std::string name() const override { return "instruction_mix"; }

protected:
    bool appliesToKernel(const KernelFacts &k, const RubricInput &) const override { return !k.ptxBody.empty(); }

    RubricScore scoreKernel(const KernelFacts &k, const ProgramFacts &p, const RubricInput &) const override
    {
        RubricScore s;
        const PtxMix m = countPtx(k.ptxBody);
        const PtxMix hot = hotLoopPtx(k.ptxBody);
        const MixFigures f = instructionMixFigures(k, p);
        const bool loop = f.hotLoop;
        const int global = m.globalLoads + m.globalStores;
        const double fmaShare = f.fmaShare, ldsPerFma = f.ldsPerFma, vectorShare = f.vectorShare,
                     intShare = f.integerShare;
        s.evidence = std::to_string(m.total) + " PTX instructions: " + std::to_string(m.fma) + " FMA (" +
                     percent(m.total ? double(m.fma) / m.total : 0) + "), " + std::to_string(m.floatOther) +
                     " other float, " + std::to_string(m.sharedLoads) + " ld.shared, " +
                     std::to_string(m.sharedStores) + " st.shared, " + std::to_string(global) + " global (" +
                     std::to_string(m.globalVector) + " vector, " + percent(vectorShare) + "), " +
                     std::to_string(m.special) + " special-function, " + std::to_string(m.integer) + " integer (" +
                     percent(intShare) + "), " + std::to_string(m.branches) + " branches" +
                     (loop ? "; hot loop: " + std::to_string(hot.total) + " instructions, " + std::to_string(hot.fma) +
                                 " FMA (" + percent(fmaShare) + "), " + std::to_string(hot.sharedLoads) +
                                 " ld.shared (" + fmt(ldsPerFma, 2) + " per FMA)"
                           : std::string());
        if (f.computeBound) {
            s.score = computeMixScore(fmaShare, ldsPerFma);
            s.sentence = percent(fmaShare) + " of the " + (loop ? "hot loop's " : "") + "instructions are FMAs with " +
                         fmt(ldsPerFma, 2) + " shared loads per FMA" +
                         (fmaShare >= 0.5 && ldsPerFma <= 0.25
                              ? ": the math dominates, as a compute-bound kernel wants."
                              : ": larger thread tiles (thread_m, thread_n) put more FMAs behind each shared load.");
        } else {
            s.score = memoryMixScore(vectorShare, intShare);
            s.sentence = percent(vectorShare) + " of the global memory instructions are vectorized and " +
                         percent(intShare) + " of all instructions are integer index math" +
                         (vectorShare < 1 ? ": wider vectors (vector=4) move more bytes per instruction." : ".");
        }
        if (m.special > 0)
            s.sentence +=
                " " + std::to_string(m.special) + " special-function instructions (exp, rsqrt, ...) run on the SFUs.";
        return s;
    }
};

} // namespace

std::unique_ptr<RubricDimension> makeInstructionMix()
{
    return std::make_unique<InstructionMix>();
}

} // namespace stitch::rubric
