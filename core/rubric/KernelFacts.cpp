// Per-kernel facts shared by the rubric dimensions: launch shape, resources, FLOPs, bytes and the
// replayed memory streams (AccessStreams.cpp).
//   Problem + GeneratedProgram (+ CompileResult) -> analyzeProgram -> ProgramFacts
#include "core/rubric/KernelFacts.h"
#include "core/rubric/RegisterModel.h"
#include "core/rubric/IssueReplay.h"

#include "core/rubric/Dimensions.h" // the PTX counts (InstructionMix.cpp)

#include "core/ir/DType.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace stitch::rubric {

SectorStats sectorsPerRequest(const AccessStream &stream)
{
    if (stream.sectorStats)
        return *stream.sectorStats;
    SectorStats s;
    int counted = 0;
    // Distinct sectors and 4-byte words (for the ideal) of each warp: sorted, then counted (the
    // agents' lookahead scores thousands of streams a program; sets were a tenth of its time).
    std::vector<std::int64_t> sectors, bytes4;
    auto distinct = [](std::vector<std::int64_t> &v) {
        std::sort(v.begin(), v.end());
        return static_cast<double>(std::unique(v.begin(), v.end()) - v.begin());
    };
    for (const auto &warp : stream.warps) {
        sectors.clear();
        bytes4.clear();
        int active = 0;
        for (std::int64_t addr : warp) {
            if (addr < 0)
                continue;
            ++active;
            for (std::int64_t b = addr; b < addr + stream.bytesPerLane; b += 4) {
                sectors.push_back(b / 32);
                bytes4.push_back(b / 4);
            }
        }
        if (active == 0)
            continue;
        ++counted;
        s.sectors += distinct(sectors);
        s.ideal += std::ceil(distinct(bytes4) * 4.0 / 32.0);
        s.activeLanes += active;
    }
    if (counted > 0) {
        s.sectors /= counted;
        s.ideal /= counted;
        s.activeLanes /= counted;
    }
    stream.sectorStats = s;
    return s;
}

BankStats bankWavefronts(const AccessStream &stream, int banks)
{
    if (stream.bankStats && stream.bankStats->first == banks)
        return stream.bankStats->second;
    BankStats s;
    const int phaseLanes = stream.bytesPerLane >= 16 ? 8 : stream.bytesPerLane == 8 ? 16 : 32;
    int counted = 0;
    // A phase's distinct 4-byte words, then how many fall in each bank (sorted vectors, not a set
    // per bank: the agents' lookahead scores thousands of shared streams a program).
    std::vector<std::int64_t> words;
    std::vector<std::size_t> perBank(static_cast<std::size_t>(std::max(banks, 1)));
    for (const auto &warp : stream.warps) {
        double wavefronts = 0, ideal = 0;
        bool any = false;
        for (std::size_t first = 0; first < warp.size(); first += static_cast<std::size_t>(phaseLanes)) {
            words.clear();
            bool active = false;
            for (std::size_t l = first; l < std::min(warp.size(), first + static_cast<std::size_t>(phaseLanes)); ++l) {
                if (warp[l] < 0)
                    continue;
                active = true;
                for (std::int64_t b = warp[l]; b < warp[l] + stream.bytesPerLane; b += 4)
                    words.push_back(b / 4);
            }
            if (!active)
                continue;
            std::sort(words.begin(), words.end());
            words.erase(std::unique(words.begin(), words.end()), words.end());
            std::fill(perBank.begin(), perBank.end(), 0);
            std::size_t ways = 1;
            for (std::int64_t w : words)
                ways = std::max(ways, ++perBank[static_cast<std::size_t>(w % banks)]);
            wavefronts += static_cast<double>(ways);
            ideal += 1;
            s.maxWays = std::max(s.maxWays, static_cast<int>(ways));
            any = true;
        }
        if (!any)
            continue;
        ++counted;
        s.wavefronts += wavefronts;
        s.ideal += ideal;
    }
    if (counted > 0) {
        s.wavefronts /= counted;
        s.ideal /= counted;
    }
    stream.bankStats = std::make_pair(banks, s);
    return s;
}

std::string ptxEntryBody(const std::string &ptx, const std::string &kernel)
{
    const std::string key = ".entry " + kernel + "(";
    std::size_t at = ptx.find(key);
    if (at == std::string::npos)
        return {};
    const std::size_t open = ptx.find('{', at);
    if (open == std::string::npos)
        return {};
    int depth = 0;
    for (std::size_t i = open; i < ptx.size(); ++i) {
        if (ptx[i] == '{')
            ++depth;
        else if (ptx[i] == '}' && --depth == 0)
            return ptx.substr(open + 1, i - open - 1);
    }
    return ptx.substr(open + 1);
}

namespace detail {

std::optional<std::int64_t> evalIndex(const ir::Expr &e, const ir::SizeBindings &sizes,
                                      const std::map<std::string, std::int64_t> &vars)
{
    using ir::ExprKind;
    switch (e.kind()) {
    case ExprKind::IntConst:
        return e.intValue();
    case ExprKind::SizeVar: {
        auto it = sizes.find(e.name());
        return it == sizes.end() ? std::nullopt : std::optional<std::int64_t>(it->second);
    }
    case ExprKind::IterVar: {
        auto it = vars.find(e.name());
        return it == vars.end() ? std::nullopt : std::optional<std::int64_t>(it->second);
    }
    case ExprKind::Cast:
        return evalIndex(e.operand(0), sizes, vars);
    case ExprKind::Unary: {
        auto v = evalIndex(e.operand(0), sizes, vars);
        if (!v)
            return std::nullopt;
        if (e.unaryOp() == ir::UnaryOp::Neg)
            return -*v;
        if (e.unaryOp() == ir::UnaryOp::Abs)
            return *v < 0 ? -*v : *v;
        if (e.unaryOp() == ir::UnaryOp::Not)
            return *v == 0 ? 1 : 0;
        return std::nullopt;
    }
    case ExprKind::Select: {
        auto c = evalIndex(e.operand(0), sizes, vars);
        if (!c)
            return std::nullopt;
        return evalIndex(e.operand(*c ? 1 : 2), sizes, vars);
    }
    case ExprKind::Binary: {
        auto a = evalIndex(e.operand(0), sizes, vars), b = evalIndex(e.operand(1), sizes, vars);
        if (!a || !b)
            return std::nullopt;
        using ir::BinaryOp;
        switch (e.binaryOp()) {
        case BinaryOp::Add:
            return *a + *b;
        case BinaryOp::Sub:
            return *a - *b;
        case BinaryOp::Mul:
            return *a * *b;
        case BinaryOp::Div:
            return *b == 0 ? std::nullopt : std::optional<std::int64_t>(*a / *b);
        case BinaryOp::Mod:
            return *b == 0 ? std::nullopt : std::optional<std::int64_t>(*a % *b);
        case BinaryOp::FloorDiv: {
            if (*b == 0)
                return std::nullopt;
            std::int64_t q = *a / *b;
            if ((*a % *b != 0) && ((*a < 0) != (*b < 0)))
                --q;
            return q;
        }
        case BinaryOp::Min:
            return std::min(*a, *b);
        case BinaryOp::Max:
            return std::max(*a, *b);
        case BinaryOp::Lt:
            return *a < *b;
        case BinaryOp::Le:
            return *a <= *b;
        case BinaryOp::Gt:
            return *a > *b;
        case BinaryOp::Ge:
            return *a >= *b;
        case BinaryOp::Eq:
            return *a == *b;
        case BinaryOp::Ne:
            return *a != *b;
        case BinaryOp::And:
            return (*a != 0) && (*b != 0);
        case BinaryOp::Or:
            return (*a != 0) || (*b != 0);
        case BinaryOp::Pow:
            return std::nullopt;
        }
        return std::nullopt;
    }
    default:
        return std::nullopt;
    }
}

std::pair<double, double> countFlops(const ir::Expr &e)
{
    using ir::ExprKind;
    if (!e.defined())
        return {0, 0};
    switch (e.kind()) {
    case ExprKind::Read:
    case ExprKind::IntConst:
    case ExprKind::FloatConst:
    case ExprKind::IterVar:
    case ExprKind::SizeVar:
        return {0, 0};
    default:
        break;
    }
    double flops = 0, special = 0;
    for (const auto &o : e.operands()) {
        auto [f, s] = countFlops(o);
        flops += f;
        special += s;
    }
    if (e.kind() == ExprKind::Unary) {
        switch (e.unaryOp()) {
        case ir::UnaryOp::Exp:
        case ir::UnaryOp::Log:
        case ir::UnaryOp::Sqrt:
        case ir::UnaryOp::Rsqrt:
        case ir::UnaryOp::Tanh:
        case ir::UnaryOp::Sigmoid:
        case ir::UnaryOp::Erf:
        case ir::UnaryOp::Sin:
        case ir::UnaryOp::Cos:
            flops += 4;
            special += 1;
            break;
        default:
            flops += 1;
        }
    } else if (e.kind() == ExprKind::Binary) {
        const bool pw = e.binaryOp() == ir::BinaryOp::Pow;
        flops += pw ? 8 : 1;
        special += pw ? 2 : 0;
    } else if (e.kind() == ExprKind::Select) {
        flops += 1;
    }
    return {flops, special};
}

} // namespace detail

namespace {

double evalOr(const ir::Expr &e, const ir::SizeBindings &sizes, double fallback)
{
    auto v = ir::evaluateSizeExpr(e, sizes);
    return v.ok() ? static_cast<double>(*v) : fallback;
}

double tensorBytes(const ir::Tensor &t, const ir::SizeBindings &sizes)
{
    auto ext = t.shape.evaluate(sizes);
    return ext.ok() ? static_cast<double>(ir::elementCount(*ext)) * ir::dtypeSize(t.dtype) : 0.0;
}

/// FLOPs of one op over its whole domain; reduction extents that depend on spatial variables are
/// taken at the domain's midpoint.
std::pair<double, double> opFlops(const ir::ComputeOp &op, const ir::SizeBindings &sizes, bool withReduction,
                                  bool withInit)
{
    double points = 1;
    std::map<std::string, std::int64_t> mid;
    for (const auto &v : op.domain) {
        const double ext = evalOr(v.extent, sizes, 1);
        points *= ext;
        mid[v.name] = static_cast<std::int64_t>(ext / 2);
    }
    auto [f, s] = detail::countFlops(op.body);
    if (!op.reduction)
        return {points * f, points * s};
    double reduce = 1;
    for (const auto &v : op.reduction->vars) {
        auto e = detail::evalIndex(v.extent, sizes, mid);
        reduce *= e ? static_cast<double>(std::max<std::int64_t>(*e, 0)) : 1.0;
    }
    auto [fi, si] = detail::countFlops(op.reduction->init);
    double flops = 0, special = 0;
    if (withReduction) {
        flops += points * reduce * (f + 1);
        special += points * reduce * s;
    }
    if (withInit) {
        flops += points * (fi + (op.reduction->init.defined() ? 1 : 0));
        special += points * si;
    }
    return {flops, special};
}

/// The accesses, traffic and occupancy of a kernel whose FLOPs and unique bytes are set.
void finishFacts(KernelFacts &k, const schedule::Problem &problem, const schedule::GroupAnalysis &analysis)
{
    detail::describeAccesses(k, problem, analysis);
    // A loop-free kernel issues its PTX once per warp, give or take predication; kernels with
    // loops (GEMM k-loops, generic reductions) keep the strategy's estimate.
    if (k.ptxMix.total > 0 && k.ptxLoop.total == 0 &&
        (k.strategy == schedule::Strategy::RowReduction || k.strategy == schedule::Strategy::Elementwise))
        k.instructionsPerWarp = k.ptxMix.total;
    for (const auto &s : k.streams) {
        if (s.shared)
            k.sharedTrafficBytes +=
                bankWavefronts(s, problem.arch.sharedMemoryBanks).wavefronts * 128.0 * s.requests;
        else
            k.trafficBytes += sectorsPerRequest(s).sectors * 32.0 * s.requests;
    }
    k.trafficBytes = std::max(k.trafficBytes, k.uniqueBytes);

    auto occ = computeOccupancy(problem.arch, k.threads, k.registers, k.sharedBytesTotal());
    if (occ.ok())
        k.occupancy = *occ;
    else
        k.occupancyError = occ.error().message;
}

/// The hot loop's issue on one scheduler (KernelFacts::sassReplay), once the occupancy is known.
void replayHotLoop(KernelFacts &k, const std::vector<cuda::SassInstruction> &body, const GpuSpec &gpu)
{
    if (body.empty() || !k.occupancy || k.blocks <= 0)
        return;
    constexpr double kSchedulers = 4;
    const double warpsPerBlock = std::ceil(k.threads / 32.0);
    const double perSm = std::ceil(double(k.launchedBlocks()) / std::max(1, gpu.multiprocessors));
    const double resident = std::min(perSm, double(k.occupancy->activeBlocksPerSm));
    k.sassReplayWarps = static_cast<int>(std::max(1.0, std::ceil(resident * warpsPerBlock / kSchedulers)));
    k.sassReplay = replayLoop(body, k.sassReplayWarps, static_cast<int>(std::max(1.0, std::ceil(warpsPerBlock / kSchedulers))));
}

} // namespace

Result<ProgramFacts> analyzeProgram(const schedule::Problem &problem, const codegen::GeneratedProgram &program,
                                    const cuda::CompileResult *compiled, const GpuSpec *gpu)
{
    ProgramFacts facts;
    facts.arch = &problem.arch;
    facts.gpu = gpu ? gpu : ArchDatabase::builtin().defaultGpuFor(problem.arch.name);
    if (!facts.gpu)
        return Error{ErrorKind::InvalidArgument, "no GPU of architecture " + problem.arch.name + " in the database"};
    const auto &sizes = problem.sizes;
    // The machine code of every kernel, where the compile made sm_90 code (other targets: PTX only).
    std::vector<cuda::SassKernel> sass;
    if (compiled && !compiled->cubin.empty())
        if (auto scanned = cuda::scanSass(compiled->cubin); scanned.ok())
            sass = std::move(*scanned);
    for (const auto &gk : program.kernels) {
        KernelFacts k;
        std::vector<cuda::SassInstruction> hotBody; // the hot loop's machine code, for the replay
        k.name = gk.code.name;
        k.kernel = &gk;
        k.strategy = gk.group.strategy;
        k.role = gk.code.role;
        auto analysis = schedule::analyzeGroup(problem.graph, gk.group.ops, gk.group.strategy);
        if (!analysis.ok())
            return analysis.error();
        k.threads = gk.code.block[0] * gk.code.block[1] * gk.code.block[2];
        double blocks = 1;
        for (const auto &g : gk.code.grid)
            blocks *= g.defined() ? evalOr(g, sizes, 1) : 1;
        k.blocks = static_cast<std::int64_t>(blocks);
        if (k.tiledGemm() && gk.group.value("stream_k") == 1) {
            k.streamK = true;
            k.blocks = static_cast<std::int64_t>(std::ceil(evalOr(analysis->domain[0], sizes, 1) / gk.group.value("block_m")) *
                                                 std::ceil(evalOr(analysis->domain[1], sizes, 1) / gk.group.value("block_n")));
            k.streamKBlocks = schedule::streamKBlocks(problem.arch, gk.group);
            k.streamKTiles = schedule::streamKTiles(k.blocks, k.streamKBlocks);
        }
        k.dynamicSharedBytes = gk.code.dynamicSharedBytes;
        k.clusterSize = gk.code.clusterSize;

        const cuda::KernelResources *res = compiled ? compiled->kernel(k.name) : nullptr;
        if (res) {
            k.compiled = true;
            k.registers = res->registers;
            k.staticSharedBytes = res->sharedBytes;
            k.spillBytes =
                res->spillStoreBytes < 0 || res->spillLoadBytes < 0 ? -1 : res->spillStoreBytes + res->spillLoadBytes;
            k.localBytes = res->localBytes;
            k.ptxBody = ptxEntryBody(compiled->ptx, k.name);
            k.ptxMix = countPtx(k.ptxBody);
            k.ptxLoop = hotLoopPtx(k.ptxBody);
            for (const auto &sk : sass)
                if (sk.mangledName == res->mangledName) {
                    k.sassScanned = true;
                    k.sassKernel = sk.all;
                    if (const cuda::SassLoop *hot = sk.hotLoop()) {
                        k.sassLoop = hot->mix;
                        hotBody = loopBody(sk, *hot);
                    }
                }
        } else {
            auto est = schedule::groupResources(*analysis, gk.group, problem);
            k.registers = k.splitSum() || k.transposeB() ? 32 : est.ok() ? est->estimatedRegisters : 32;
            // A SIMT GEMM's registers from the model fitted to NVRTC's counts (RegisterModel.h).
            if (!k.splitSum() && !k.transposeB() && est.ok())
                if (auto predicted = predictGemmRegisters(builtinRegisterModel(), gk.group, est->threadsPerBlock))
                    k.registers = *predicted;
        }

        // FLOPs and the bytes of every tensor the kernel touches once. The transposing pass reads B and
        // writes its copy: no FLOPs.
        const bool gemm = k.strategy == schedule::Strategy::Gemm;
        if (k.transposeB()) {
            if (const ir::Tensor *b = problem.graph.tensor(analysis->b))
                k.uniqueBytes = 2 * tensorBytes(*b, sizes);
            finishFacts(k, problem, *analysis);
            replayHotLoop(k, hotBody, *facts.gpu);
            facts.kernels.push_back(std::move(k));
            continue;
        }
        const int split = gemm ? gk.group.value("split_k") : 1;
        for (std::size_t i = 0; i < analysis->ops.size(); ++i) {
            const auto &op = *analysis->ops[i];
            const bool head = gemm && i == 0;
            if (gemm && k.splitSum() && head) {
                auto [f, s] = opFlops(op, sizes, false, true);
                double mn = 1;
                for (const auto &v : op.domain)
                    mn *= evalOr(v.extent, sizes, 1);
                k.flops += f + mn * split;
                k.specialOps += s;
                continue;
            }
            if (gemm && split > 1 && !k.splitSum() && !head)
                continue;
            if (gemm && !k.splitSum() && !head)
                ++k.epilogueOps;
            auto [f, s] = opFlops(op, sizes, true, !(gemm && split > 1 && head));
            k.flops += f;
            k.specialOps += s;
        }
        if (k.tiledGemm()) {
            const double m = evalOr(analysis->domain[0], sizes, 1), n = evalOr(analysis->domain[1], sizes, 1);
            const double bm = gk.group.value("block_m"), bn = gk.group.value("block_n");
            if (m > 0 && n > 0 && bm > 0 && bn > 0)
                k.tileFlops = k.flops * std::ceil(m / bm) * bm * std::ceil(n / bn) * bn / (m * n);
        }
        std::vector<ir::TensorId> touched;
        if (gemm && split > 1) {
            double mn = evalOr(analysis->domain[0], sizes, 1) * evalOr(analysis->domain[1], sizes, 1);
            k.uniqueBytes += mn * split * 4.0;
            for (ir::TensorId id : analysis->reads)
                if ((id == analysis->a || id == analysis->b) != k.splitSum())
                    touched.push_back(id);
            if (k.splitSum())
                touched.insert(touched.end(), analysis->stored.begin(), analysis->stored.end());
        } else {
            touched = analysis->reads;
            touched.insert(touched.end(), analysis->stored.begin(), analysis->stored.end());
        }
        for (ir::TensorId id : touched)
            if (const ir::Tensor *t = problem.graph.tensor(id))
                k.uniqueBytes += tensorBytes(*t, sizes);
        finishFacts(k, problem, *analysis);
        replayHotLoop(k, hotBody, *facts.gpu);
        facts.kernels.push_back(std::move(k));
    }
    return facts;
}

} // namespace stitch::rubric
