// Lone kernels: a launch inferred from the kernel's own thread mapping, buffers sized by access.
//   parameters -> buffers / sizes / scalar inputs -> probe (KernelExec + buildFlatOps with
//   gridDim and blockDim as symbols) -> per dimension: which thread index ranges over what bound
//   -> LaunchBinding; after the real run, access ranges -> buffer element counts and factors.
#include "core/frontend/cudalift/LoneKernels.h"

#include "core/frontend/cudalift/ExprTools.h"
#include "core/frontend/cudalift/KernelExec.h"
#include "core/ir/ExprUtil.h"

#include <algorithm>
#include <array>
#include <functional>
#include <map>

namespace stitch::frontend::cudalift {

using ir::Expr;

namespace {

constexpr char kAxes[] = "xyz";
// A probe may learn the block size the kernel assumes (blockIdx.x * 16 + threadIdx.x) and run again.
constexpr int kMaxProbes = 3;

std::string axisName(const char *what, int d)
{
    return std::string(what) + "." + kAxes[d];
}

/// The probe's grid and block extents are sizes named "gridDim.x", "blockDim.y", ...: no C
/// identifier has a dot, and refusals that mention them read as the kernel's own terms.
bool isProbeSize(const std::string &name)
{
    return name.find('.') != std::string::npos;
}

bool mentionsProbe(const Expr &e)
{
    const auto sizes = ir::collectSizeVars(e);
    return std::any_of(sizes.begin(), sizes.end(), isProbeSize);
}

[[noreturn]] void refuseAt(const SourceLocation &where, std::string construct, std::string why, std::string advice = {})
{
    throw LiftRefusal(Refusal{where, std::move(construct), std::move(why), std::move(advice)});
}

/// The bounds guards put on a thread index whose launch extent is symbolic: the range end is the
/// extent itself, a bound S, or min(extent, S), nested once per guard.
void guardBounds(const Expr &hi, std::vector<Expr> &bounds)
{
    if (!mentionsProbe(hi)) {
        bounds.push_back(hi);
    } else if (hi.kind() == ir::ExprKind::Binary && hi.binaryOp() == ir::BinaryOp::Min) {
        guardBounds(hi.operand(0), bounds);
        guardBounds(hi.operand(1), bounds);
    }
}

bool rangesOver(const LaunchOps &ops, const std::string &var)
{
    return std::any_of(ops.ops.begin(), ops.ops.end(), [&](const FlatOp &op) {
        return std::any_of(op.spatial.begin(), op.spatial.end(), [&](const FlatVar &v) { return v.name == var; });
    });
}

/// The one bound guards put on var in every op that ranges over it; refuses, at the op, when an
/// op leaves var unbounded, bounds it by two different sizes or differently from another op.
Expr commonBound(const LaunchOps &ops, const std::string &var, const std::string &what, IndexMath &math)
{
    std::optional<Expr> bound;
    for (const FlatOp &op : ops.ops) {
        for (const FlatVar &v : op.spatial) {
            if (v.name != var)
                continue;
            const std::string construct = v.hint.empty() ? what : v.hint;
            const std::string index = "this thread index (" + what + ")";
            std::vector<Expr> bounds;
            for (const Expr &b : [&] { std::vector<Expr> all; guardBounds(v.hi, all); return all; }()) {
                const Expr s = math.simplify(b);
                auto p = math.toPoly(s);
                if (std::none_of(bounds.begin(), bounds.end(), [&](const Expr &x) { return p && math.toPoly(x) == p; }))
                    bounds.push_back(s);
            }
            if (bounds.empty())
                refuseAt(op.span.begin, construct,
                         "no guard bounds " + index + ", so how many threads the kernel expects is unknown (it is "
                         "never launched from host code)",
                         "guard the work with the size it covers, e.g. if (i < n), or launch the kernel from main");
            if (bounds.size() > 1)
                refuseAt(op.span.begin, construct,
                         index + " is bounded by two sizes (" + bounds[0].toString() + " and " + bounds[1].toString()
                             + "), so how many threads the kernel expects is ambiguous",
                         "bound each thread index by one size");
            const Expr &b = bounds.front();
            if (!ir::collectIterVars(b).empty())
                refuseAt(op.span.begin, construct, "the bound of " + index + " (" + b.toString() + ") depends on another index");
            if (bound && math.toPoly(*bound) != math.toPoly(b))
                refuseAt(op.span.begin, construct,
                         "the kernel's stores bound " + index + " differently (" + bound->toString() + " and "
                             + b.toString() + "), so how many threads it expects is ambiguous",
                         "guard every store with the same bound");
            bound = b;
        }
    }
    return *bound;
}

/// The block size a kernel assumes along d where it indexes with blockIdx * C + threadIdx for a
/// constant C instead of blockDim (tiled kernels): found in store indices and guards.
std::optional<std::int64_t> impliedBlockSize(const LaunchOps &ops, int d, IndexMath &math)
{
    const std::string b = IndexMath::varKey(blockVar(d)), t = IndexMath::varKey(threadVar(d));
    std::set<std::int64_t> found;
    auto look = [&](const IntPoly &p) {
        auto lb = p.linearIn(b), lt = p.linearIn(t);
        if (!lb || !lt)
            return;
        const auto cb = lb->first.constantValue(), ct = lt->first.constantValue();
        if (cb && ct && *ct != 0 && *cb % *ct == 0 && *cb / *ct > 1)
            found.insert(*cb / *ct);
    };
    for (const FlatOp &op : ops.ops) {
        declareOpRanges(op, math);
        if (op.writeIndex.defined()) {
            if (auto p = math.toPoly(op.writeIndex))
                look(*p);
        }
        for (const Expr &c : conjuncts(op.partialGuard)) {
            if (auto p = math.asNonNegative(c))
                look(*p);
        }
    }
    if (found.size() == 1)
        return *found.begin();
    return std::nullopt;
}

Expr ceilDiv(const Expr &n, std::int64_t d, IndexMath &math)
{
    return d == 1 ? n : math.simplify((n + Expr(d - 1)) / Expr(d));
}

/// grid and block of binding chosen so that its threads cover exactly what the kernel's guards
/// and stride loops allow. Throws LiftRefusal.
void inferLaunch(ProgramContext &ctx, LaunchBinding &binding, TSNode definition, const std::vector<BufferInfo> &buffers,
                 const SourceLocation &kernelAt)
{
    std::array<std::optional<std::int64_t>, 3> assumedBlock;
    for (int attempt = 0; attempt < kMaxProbes; ++attempt) {
        LaunchBinding probe = binding;
        for (int d = 0; d < 3; ++d) {
            const auto dd = static_cast<std::size_t>(d);
            probe.grid[dd] = ir::sizeVar(axisName("gridDim", d));
            probe.block[dd] = assumedBlock[dd] ? Expr(*assumedBlock[dd]) : ir::sizeVar(axisName("blockDim", d));
        }
        KernelExec exec(ctx, probe, definition);
        KernelEffects effects = exec.run();
        const std::vector<std::string> consumed = effects.consumedThreadVars;
        const std::map<int, Expr> strideBounds = effects.strideBounds;
        IndexMath &math = exec.math();
        const LaunchOps ops = buildFlatOps(std::move(effects), probe, buffers, math);
        if (ops.ops.empty())
            refuseAt(kernelAt, binding.kernel, "the kernel stores nothing the lifter follows, so it computes nothing "
                                               "the graph can hold");

        bool again = false;
        for (int d = 0; d < 3; ++d) {
            const auto dd = static_cast<std::size_t>(d);
            if (!assumedBlock[dd] && rangesOver(ops, blockVar(d)) && rangesOver(ops, threadVar(d))) {
                if (auto c = impliedBlockSize(ops, d, math)) {
                    assumedBlock[dd] = *c;
                    again = true;
                }
            }
        }
        if (again)
            continue;

        auto isConsumed = [&](const std::string &v) { return std::find(consumed.begin(), consumed.end(), v) != consumed.end(); };
        std::array<bool, 3> fused{}, gridStride{}, threadStride{}, blockIndexStride{};
        int threadAxes = 0;
        for (int d = 0; d < 3; ++d) {
            const auto dd = static_cast<std::size_t>(d);
            fused[dd] = rangesOver(ops, std::string("%g") + kAxes[d]);
            gridStride[dd] = isConsumed(blockVar(d)) && isConsumed(threadVar(d));
            threadStride[dd] = !gridStride[dd] && isConsumed(threadVar(d));
            blockIndexStride[dd] = !gridStride[dd] && isConsumed(blockVar(d));
            threadAxes += fused[dd] || gridStride[dd] || threadStride[dd] ? 1 : 0;
        }
        auto defaultBlock = [&](int d) -> std::int64_t {
            if (assumedBlock[static_cast<std::size_t>(d)])
                return *assumedBlock[static_cast<std::size_t>(d)];
            return threadAxes <= 1 ? 256 : threadAxes == 2 ? 16 : d == 2 ? 4 : 8;
        };
        auto strideExtent = [&](int d) -> std::optional<Expr> {
            auto it = strideBounds.find(d);
            if (it == strideBounds.end() || !ir::collectIterVars(it->second).empty() || mentionsProbe(it->second))
                return std::nullopt;
            return math.simplify(it->second);
        };
        for (int d = 0; d < 3; ++d) {
            const auto dd = static_cast<std::size_t>(d);
            const std::string index = "blockIdx." + std::string(1, kAxes[d]) + " * blockDim." + kAxes[d]
                + " + threadIdx." + kAxes[d];
            Expr grid = Expr(1), block = Expr(1);
            if (fused[dd] || gridStride[dd]) {
                const std::int64_t b = defaultBlock(d);
                block = Expr(b);
                if (fused[dd])
                    grid = ceilDiv(commonBound(ops, std::string("%g") + kAxes[d], index, math), b, math);
                else if (auto s = strideExtent(d))
                    grid = ceilDiv(*s, b, math); // a grid-stride loop covers its range with any grid
            } else {
                if (rangesOver(ops, blockVar(d)))
                    grid = commonBound(ops, blockVar(d), axisName("blockIdx", d), math);
                else if (blockIndexStride[dd])
                    grid = strideExtent(d).value_or(Expr(1));
                if (assumedBlock[dd])
                    block = Expr(*assumedBlock[dd]);
                else if (rangesOver(ops, threadVar(d)))
                    block = commonBound(ops, threadVar(d), axisName("threadIdx", d), math);
                else if (threadStride[dd])
                    block = Expr(defaultBlock(d));
            }
            binding.grid[dd] = grid;
            binding.block[dd] = block;
        }
        return;
    }
    refuseAt(kernelAt, binding.kernel, "the block size the kernel assumes could not be settled");
}

std::string dimText(const std::array<Expr, 3> &dims)
{
    if (dims[1].isIntConst(1) && dims[2].isIntConst(1))
        return dims[0].toString();
    std::string text = "dim3(" + dims[0].toString() + ", " + dims[1].toString();
    if (!dims[2].isIntConst(1))
        text += ", " + dims[2].toString();
    return text + ")";
}

using AccessVisitor = std::function<void(int buffer, const Expr &flatIndex)>;

/// Calls visit for every buffer access of op, with the op's ranges and the facts guarding the
/// access declared in math.
void forEachAccess(const FlatOp &op, IndexMath &math, const AccessVisitor &visit)
{
    declareOpRanges(op, math);
    const std::size_t mark = math.factCount();
    auto onRead = [&](const Expr &r) {
        if (r.tensor().id >= 0 && r.operands().size() == 1)
            visit(r.tensor().id, r.operand(0));
        return r;
    };
    for (const IntPoly &f : math.factsOf(op.partialGuard))
        math.pushFact(f);
    if (op.buffer >= 0)
        visit(op.buffer, op.writeIndex);
    (void)rewriteReads(op.body, math, onRead);
    (void)rewriteReads(op.init, math, onRead);
    math.truncateFacts(mark);
    (void)rewriteReads(op.partialGuard, math, onRead);
}

bool hasIndexAtoms(const IntPoly &p, const IndexMath &math)
{
    for (const std::string &a : p.atoms()) {
        if (IndexMath::isVarKey(a) || (IndexMath::isOpaqueKey(a) && !ir::collectIterVars(math.atomExpr(a)).empty()))
            return true;
    }
    return false;
}

/// One more than the largest value p takes over the declared ranges: each variable replaced by
/// the end of its range its coefficient's sign points to. Empty when a sign is unknown.
std::optional<IntPoly> upperEnd(IntPoly p, IndexMath &math)
{
    for (int round = 0; round < 16; ++round) {
        std::string var;
        for (const std::string &a : p.atoms()) {
            if (IndexMath::isVarKey(a)) {
                var = a;
                break;
            }
        }
        if (var.empty())
            break;
        const VarRange *range = math.range(var.substr(2));
        auto linear = p.linearIn(var);
        if (!range || !linear)
            return std::nullopt;
        const IntPoly &c = linear->first;
        if (math.nonNegative(c))
            p = linear->second + c * (range->hi - 1);
        else if (math.nonNegative(-c))
            p = linear->second + c * range->lo;
        else
            return std::nullopt;
    }
    if (hasIndexAtoms(p, math))
        return std::nullopt;
    return p + 1;
}

/// The dimensions an index walks row-major (row * K + k with row < M, k < K: M, K), when it
/// covers exactly [0, extent); empty otherwise.
std::vector<Expr> factorsOf(const IntPoly &index, const IntPoly &extent, IndexMath &math)
{
    std::vector<IntPoly> dims;
    IntPoly stride = IntPoly::constant(1), rest = index;
    for (bool found = true; found && !rest.isZero();) {
        found = false;
        for (const std::string &a : rest.atoms()) {
            if (!IndexMath::isVarKey(a))
                continue;
            auto linear = rest.linearIn(a);
            const VarRange *range = math.range(a.substr(2));
            if (!linear || !(linear->first == stride) || !range || !range->lo.isZero() || hasIndexAtoms(range->hi, math)
                || !range->hi.isPositiveMonomial())
                continue;
            dims.push_back(range->hi);
            stride = stride * range->hi;
            rest = linear->second;
            found = true;
            break;
        }
    }
    if (!rest.isZero() || dims.size() < 2 || !(stride == extent))
        return {};
    std::vector<Expr> out;
    for (auto it = dims.rbegin(); it != dims.rend(); ++it)
        out.push_back(math.toExpr(*it));
    return out;
}

} // namespace

LoneKernels synthesizeLoneLaunches(ProgramContext &ctx, const std::vector<KernelInfo> &kernels, HostProgram &host)
{
    LoneKernels out;
    std::set<std::string> taken;
    // File-scope __constant__ and __device__ variables: whoever launches the kernels fills them.
    for (const auto &[name, b] : host.globals) {
        host.events.push_back({HostEvent::Kind::CopyIn, b, -1, -1, host.buffers[static_cast<std::size_t>(b)].allocation});
        taken.insert(name);
    }
    for (const KernelInfo &k : kernels) {
        if (k.qualifier != "__global__")
            continue;
        HostLaunch launch;
        launch.binding.kernel = k.name;
        launch.binding.location = k.nameLocation;
        launch.binding.index = static_cast<int>(host.launches.size());
        std::vector<int> own, pointers;
        for (const KernelParameter &p : k.parameters) {
            KernelArgument arg;
            arg.text = p.name;
            int buffer = -1;
            const bool pointer = p.type.find('*') != std::string::npos || p.type.find('[') != std::string::npos;
            const auto type = scalarTypeFromText(p.type);
            if (!type) {
                if (!launch.refusal)
                    launch.refusal = Refusal{k.nameLocation, p.type + " " + p.name,
                                             "parameter '" + p.name + "' has type '" + p.type
                                                 + "', which the lifter does not model",
                                             {}};
            } else if (pointer || !ir::isInteger(*type)) {
                BufferInfo b;
                b.name = p.name;
                for (int n = 2; taken.count(b.name) || out.sizeNames.count(b.name); ++n)
                    b.name = k.name + "_" + p.name + (n > 2 ? "_" + std::to_string(n - 1) : std::string());
                taken.insert(b.name);
                b.dtype = *type;
                b.allocation = k.nameLocation;
                buffer = static_cast<int>(host.buffers.size());
                if (pointer) {
                    arg.kind = KernelArgument::Kind::Buffer;
                    arg.pointer = PointerValue{buffer, Expr(0), *type};
                    pointers.push_back(buffer);
                } else {
                    // A by-value float is a scalar input; the kernel reads it as element 0.
                    b.elements = Expr(1);
                    b.factors = {Expr(1)};
                    out.scalarShapes[buffer] = {};
                    arg.kind = KernelArgument::Kind::Scalar;
                    arg.scalar = ir::read(b.ref(buffer), {Expr(0)});
                }
                own.push_back(buffer);
                host.buffers.push_back(std::move(b));
            } else {
                arg.kind = KernelArgument::Kind::Scalar;
                arg.scalar = ir::sizeVar(p.name);
                out.sizeNames.insert(p.name);
            }
            launch.argumentTexts.push_back(p.name);
            launch.bufferArguments.push_back(buffer);
            launch.binding.arguments.push_back(std::move(arg));
        }
        auto definition = ctx.functions.find(k.name);
        if (!launch.refusal && definition != ctx.functions.end()) {
            try {
                inferLaunch(ctx, launch.binding, definition->second, host.buffers, k.nameLocation);
            } catch (const LiftRefusal &r) {
                launch.refusal = r.refusal();
                const std::string &why = launch.refusal->why;
                if (why.find("blockDim.") != std::string::npos || why.find("gridDim.") != std::string::npos)
                    launch.refusal->advice += std::string(launch.refusal->advice.empty() ? "" : "; ")
                        + "no host code launches the kernel, so its block and grid sizes are unknown: launch it from "
                          "main";
            } catch (const std::exception &e) {
                launch.refusal = Refusal{k.nameLocation, k.name, std::string("internal limit: ") + e.what(), {}};
            }
        }
        // The main loop refuses a kernel without a definition (a template) by itself.
        const bool inferred = !launch.refusal && definition != ctx.functions.end();
        launch.gridText = inferred ? dimText(launch.binding.grid) : "?";
        launch.blockText = inferred ? dimText(launch.binding.block) : "?";
        for (int b : own)
            host.events.push_back({HostEvent::Kind::CopyIn, b, -1, -1, k.nameLocation});
        host.events.push_back({HostEvent::Kind::Launch, -1, -1, launch.binding.index, k.nameLocation});
        for (int b : pointers)
            host.events.push_back({HostEvent::Kind::CopyOut, b, -1, -1, k.nameLocation});
        host.launches.push_back(std::move(launch));
    }
    return out;
}

void sizeLoneBuffers(const LaunchOps &ops, const HostLaunch &launch, std::vector<BufferInfo> &buffers, IndexMath &math)
{
    std::set<int> unsized;
    for (int b : launch.bufferArguments) {
        if (b >= 0 && !buffers[static_cast<std::size_t>(b)].elements.defined())
            unsized.insert(b);
    }
    struct Candidate {
        IntPoly extent;
        std::vector<Expr> factors;
    };
    std::map<int, std::vector<Candidate>> candidates;
    std::map<int, std::pair<SourceLocation, std::string>> firstUse;
    for (const FlatOp &op : ops.ops) {
        forEachAccess(op, math, [&](int b, const Expr &index) {
            if (!unsized.count(b))
                return;
            const std::string access = buffers[static_cast<std::size_t>(b)].name + "[" + index.toString() + "]";
            firstUse.emplace(b, std::make_pair(op.span.begin, access));
            auto p = math.toPoly(index);
            if (!p || !math.nonNegative(*p))
                refuseAt(op.span.begin, access,
                         "the kernel may index '" + buffers[static_cast<std::size_t>(b)].name
                             + "' below its start, so its extent cannot be inferred (it is never launched from host code)",
                         "guard the access, or launch the kernel from main with sized buffers");
            if (auto end = upperEnd(*p, math)) {
                Candidate c{*end, factorsOf(*p, *end, math)};
                auto &list = candidates[b];
                if (b == op.buffer && index.sameAs(op.writeIndex))
                    list.insert(list.begin(), std::move(c));
                else
                    list.push_back(std::move(c));
            }
        });
    }
    for (int b : unsized) {
        auto use = firstUse.find(b);
        if (use == firstUse.end())
            continue; // never touched: no extent needed
        // The smallest candidate every access of the buffer provably stays below.
        const Candidate *best = nullptr;
        std::vector<Expr> factors;
        for (const Candidate &c : candidates[b]) {
            if (best && math.lessEqual(best->extent, c.extent)) {
                if (factors.empty() && (best->extent == c.extent))
                    factors = c.factors;
                continue;
            }
            bool covers = true;
            for (const FlatOp &op : ops.ops) {
                forEachAccess(op, math, [&](int buffer, const Expr &index) {
                    if (buffer != b || !covers)
                        return;
                    auto p = math.toPoly(index);
                    covers = p && math.less(*p, c.extent);
                });
            }
            if (covers) {
                best = &c;
                factors = c.factors;
            }
        }
        BufferInfo &info = buffers[static_cast<std::size_t>(b)];
        if (!best)
            refuseAt(use->second.first, use->second.second,
                     "the lifter cannot bound the indices the kernel uses in '" + info.name
                         + "', so its extent cannot be inferred (it is never launched from host code)",
                     "index buffers with thread and loop indices bounded by guards and loop conditions");
        // As a cudaMalloc(M * K * sizeof(float)) would state it: the factors' product, in order.
        info.elements = math.toExpr(best->extent);
        info.factors = factors.empty() ? std::vector<Expr>{info.elements} : factors;
        if (!factors.empty()) {
            info.elements = factors.front();
            for (std::size_t f = 1; f < factors.size(); ++f)
                info.elements = info.elements * factors[f];
        }
    }
}

Diagnostic loneLaunchNote(const HostLaunch &launch, const std::set<std::string> &sizeNames)
{
    std::string sizes;
    for (const KernelArgument &a : launch.binding.arguments) {
        if (a.kind == KernelArgument::Kind::Scalar && a.scalar.kind() == ir::ExprKind::SizeVar && sizeNames.count(a.text))
            sizes += (sizes.empty() ? "" : ", ") + a.text;
    }
    std::string message = "kernel '" + launch.binding.kernel + "' is launched by no host code: lifted on its own as if "
        + "launched <<<" + launch.gridText + ", " + launch.blockText + ">>>, the threads its guards allow";
    if (!sizes.empty())
        message += "; its integer parameters are sizes (" + sizes + "), given with --size NAME=VALUE";
    message += "; its pointer parameters are tensors of its own";
    return {Severity::Note, launch.binding.location, message};
}

} // namespace stitch::frontend::cudalift
