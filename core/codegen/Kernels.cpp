#include "core/codegen/Kernels.h"

#include "core/codegen/CudaWriter.h"
#include "core/ir/ExprUtil.h"

#include <algorithm>
#include <array>
#include <map>
#include <set>

namespace stitch::codegen {

using ir::Expr;

std::vector<KernelParam> kernelParams(const GenContext &ctx)
{
    std::vector<KernelParam> out;
    for (ir::TensorId id : ctx.analysis.reads) {
        const ir::Tensor *t = ctx.graph.tensor(id);
        out.push_back({cIdentifier(t->name), true, id, t->dtype, false, {}});
    }
    for (ir::TensorId id : ctx.analysis.stored) {
        const ir::Tensor *t = ctx.graph.tensor(id);
        out.push_back({cIdentifier(t->name), true, id, t->dtype, true, {}});
    }
    // Every size the graph uses: kernels index tensors by their shapes.
    std::set<std::string> used;
    auto collect = [&](const Expr &e) {
        for (const auto &s : ir::collectSizeVars(e))
            used.insert(s);
    };
    for (const auto *op : ctx.analysis.ops) {
        collect(op->body);
        for (const auto &v : op->allIterVars()) {
            collect(v.extent);
            collect(v.lowerBound);
        }
        if (op->reduction && op->reduction->init.defined())
            collect(op->reduction->init);
        for (const auto &r : op->inputs())
            for (const auto &d : ctx.graph.tensor(r.id)->shape.dims())
                collect(d);
        for (const auto &d : ctx.graph.tensor(op->output.id)->shape.dims())
            collect(d);
    }
    for (const auto &name : ctx.graph.sizeVars())
        if (used.contains(name))
            out.push_back({cIdentifier(name), false, -1, ir::DType::I32, false, name});
    return out;
}

std::string paramList(const std::vector<KernelParam> &params)
{
    std::string out;
    for (const auto &p : params) {
        if (!out.empty())
            out += ", ";
        if (p.tensor)
            out += std::string(p.written ? "" : "const ") + ir::cudaTypeName(p.dtype) + " *__restrict__ " + p.name;
        else
            out += "int " + p.name;
    }
    return out;
}

std::string headerComment(const GenContext &ctx)
{
    std::string text = ctx.kernelName + ": " + schedule::strategyName(ctx.group.strategy) + " kernel for\n";
    for (const auto *op : ctx.analysis.ops)
        text += "  " + op->toString() + "\n";
    text += "decisions:";
    for (const auto &d : schedule::decisionDefs(ctx.group.strategy))
        text += " " + d.key + "=" + d.valueText(ctx.group.value(d.key));
    if (!ctx.analysis.local.empty()) {
        text += "\nkept on chip (never stored):";
        for (ir::TensorId id : ctx.analysis.local)
            text += " " + ctx.graph.tensor(id)->name;
    }
    return text;
}

Expr ceilDivExpr(const Expr &a, int b)
{
    if (a.isConst())
        return Expr((a.intValue() + b - 1) / b);
    return (a + (b - 1)) / b;
}

std::optional<std::string> inlineLocalRead(const GenContext &ctx, const Expr &read, const ExprScope &scope)
{
    if (!ctx.analysis.isLocal(read.tensor().id))
        return std::nullopt;
    const ir::ComputeOp *producer = ctx.graph.producer(read.tensor().id);
    if (!producer || producer->reduction)
        return std::nullopt;
    // The producer's domain variables take the reader's index expressions.
    ExprScope inner = scope;
    for (std::size_t d = 0; d < producer->domain.size() && d < read.operands().size(); ++d)
        inner.vars[producer->domain[d].name] = emitExpr(read.operands()[d], scope);
    return "(" + emitExpr(producer->body, inner) + ")";
}

namespace {

const char *floordivHelper = R"(__device__ __forceinline__ int stitch_floordiv(int a, int b)
{
    const int q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
})";

} // namespace

std::string floorDivHelperSource() { return floordivHelper; }

namespace {

/// An iteration variable's C name in the generic kernel: "i_" + its name + "_". Generated locals end
/// in '_' and never start with "i_" (acc_, t_, col_), and parameters never end in '_' (cIdentifier).
std::string iterName(const std::string &name) { return "i_" + cIdentifier(name) + "_"; }

} // namespace

KernelCode generateGenericKernel(const GenContext &ctx)
{
    const ir::ComputeOp &op = *ctx.analysis.ops.front();
    const int threads = ctx.group.value("threads"), tpr = ctx.group.value("threads_per_row");
    const bool tiled = tpr > 0 && !op.domain.empty();
    KernelCode k;
    k.name = ctx.kernelName;
    k.params = kernelParams(ctx);
    k.block = tiled ? std::array<int, 3>{tpr, threads / tpr, 1} : std::array<int, 3>{threads, 1, 1};

    ExprScope scope;
    scope.graph = &ctx.graph;
    scope.wideTensors = &ctx.wide;
    CudaWriter w;
    w.comment(headerComment(ctx));
    w.line("extern \"C\" __global__ void __launch_bounds__(" + std::to_string(threads) + ") " + k.name + "(" +
           paramList(k.params) + ")");
    w.open("");
    auto extent = [&](std::size_t d) { return "(long long)(" + emitExpr(op.domain[d].extent, scope) + ")"; };
    // The flattened rows (every dimension but the innermost, or all of them when flat).
    const std::size_t rowDims = tiled ? op.domain.size() - 1 : op.domain.size();
    std::string rows = "1LL";
    for (std::size_t d = 0; d < rowDims; ++d)
        rows += " * " + extent(d);
    if (tiled) {
        // A 2-D launch: blockIdx.x over tiles of tpr columns of the innermost dimension, blockIdx.y
        // over bands of threads / tpr of the other dimensions' rows (looping past 65535 bands).
        const std::string rpb = std::to_string(threads / tpr);
        w.line("const long long cols_ = " + extent(op.domain.size() - 1) + ";");
        w.line("const long long rows_ = " + rows + ";");
        w.line("const long long col_ = (long long)blockIdx.x * " + std::to_string(tpr) + " + threadIdx.x;");
        w.line("if (col_ >= cols_)");
        w.line("    return;");
        const auto &v = op.domain.back();
        const std::string name = iterName(v.name);
        w.line("const int " + name + " = " + emitExpr(v.lowerBound, scope) + " + (int)col_;");
        scope.vars[v.name] = name;
        w.open("for (long long t_ = (long long)blockIdx.y * " + rpb + " + threadIdx.y; t_ < rows_; t_ += (long long)gridDim.y * " +
               rpb + ")");
    } else {
        w.line("const long long total_ = " + rows + ";");
        w.open("for (long long t_ = (long long)blockIdx.x * blockDim.x + threadIdx.x; t_ < total_; t_ += (long long)gridDim.x * blockDim.x)");
    }
    w.line("long long rest_ = t_;");
    for (std::size_t d = rowDims; d-- > 0;) {
        const auto &v = op.domain[d];
        const std::string name = iterName(v.name);
        if (d > 0) {
            w.line("const int " + name + " = " + emitExpr(v.lowerBound, scope) + " + (int)(rest_ % " + extent(d) + ");");
            w.line("rest_ /= " + extent(d) + ";");
        } else {
            w.line("const int " + name + " = " + emitExpr(v.lowerBound, scope) + " + (int)rest_;");
        }
        scope.vars[v.name] = name;
    }
    w.line("(void)rest_;");
    const char *type = ir::cudaTypeName(op.output.dtype);
    std::string value;
    if (op.reduction) {
        const std::string init = op.reduction->init.defined() ? emitExpr(op.reduction->init, scope)
                                                              : reductionIdentityLiteral(op.reduction->kind, op.output.dtype);
        const bool wide = ctx.group.value("accumulate") == 1 && ir::isFloat(op.output.dtype);
        w.line(std::string(wide ? "double" : type) + " acc_ = " + init + ";");
        for (const auto &v : op.reduction->vars) {
            const std::string name = iterName(v.name);
            const std::string lb = emitExpr(v.lowerBound, scope);
            w.open("for (int " + name + " = " + lb + "; " + name + " < " + lb + " + " + emitExpr(v.extent, scope) +
                   "; ++" + name + ")");
            scope.vars[v.name] = name;
        }
        w.line("acc_ = " + combine(op.reduction->kind, wide ? ir::DType::F64 : op.output.dtype, "acc_",
                                   (wide ? "(double)" : "") + emitExpr(op.body, scope)) + ";");
        for (std::size_t n = 0; n < op.reduction->vars.size(); ++n)
            w.close();
        value = "acc_";
    } else {
        value = emitExpr(op.body, scope);
    }
    std::vector<std::string> idx;
    for (const auto &v : op.domain)
        idx.push_back(scope.vars[v.name]);
    // Each op's value in a register; the element-wise ops after the first read them there.
    std::map<ir::TensorId, std::string> values;
    auto finish = [&](const ir::ComputeOp &o, const std::string &v) {
        const char *t = ir::cudaTypeName(o.output.dtype);
        const std::string reg = "v" + std::to_string(values.size()) + "_";
        w.line(std::string("const ") + t + " " + reg + " = (" + t + ")(" + v + ");");
        values[o.output.id] = reg;
        if (ctx.analysis.isStored(o.output.id))
            w.line(emitGlobalAccess(*ctx.graph.tensor(o.output.id), idx, scope) + " = " + reg + ";");
    };
    finish(op, value);
    for (std::size_t n = 1; n < ctx.analysis.ops.size(); ++n) {
        const ir::ComputeOp &next = *ctx.analysis.ops[n];
        ExprScope s = scope;
        for (std::size_t d = 0; d < next.domain.size() && d < op.domain.size(); ++d)
            s.vars[next.domain[d].name] = scope.vars[op.domain[d].name];
        s.local = [&values](const Expr &read, const ExprScope &) -> std::optional<std::string> {
            const auto it = values.find(read.tensor().id);
            return it == values.end() ? std::nullopt : std::optional<std::string>(it->second);
        };
        finish(next, emitExpr(next.body, s));
    }
    w.close();
    w.close();
    k.source = w.str();
    Expr totalExpr = Expr(1);
    for (const auto &v : op.domain)
        totalExpr = totalExpr.isIntConst(1) ? v.extent : totalExpr * v.extent;
    if (tiled) {
        Expr rowsExpr = Expr(1);
        for (std::size_t d = 0; d + 1 < op.domain.size(); ++d)
            rowsExpr = rowsExpr.isIntConst(1) ? op.domain[d].extent : rowsExpr * op.domain[d].extent;
        k.grid = {ceilDivExpr(op.domain.back().extent, tpr),
                  ir::min(ceilDivExpr(rowsExpr, threads / tpr), ir::intLiteralFor(rowsExpr, 65535)), Expr(1)};
    } else {
        k.grid = {ceilDivExpr(totalExpr, threads), Expr(1), Expr(1)};
    }
    return k;
}

KernelCode generateElementwiseKernel(const GenContext &ctx)
{
    const auto &a = ctx.analysis;
    const int threads = ctx.group.value("threads"), vec = ctx.group.value("vector"), items = ctx.group.value("items");
    KernelCode k;
    k.name = ctx.kernelName;
    k.params = kernelParams(ctx);
    k.block = {threads, 1, 1};

    ExprScope scope;
    scope.graph = &ctx.graph;
    scope.wideTensors = &ctx.wide;
    scope.erfc = ctx.group.value("erf") == 1;
    // Tensors read at the element itself with the group's shape are contiguous with it: vector loads.
    auto contiguous = [&](const ir::Tensor &t) {
        if (t.shape.rank() != static_cast<int>(a.domain.size()))
            return false;
        for (std::size_t d = 0; d < a.domain.size(); ++d)
            if (!t.shape[d].equals(a.domain[d]))
                return false;
        return true;
    };
    std::vector<ir::TensorId> vectorInputs;
    for (ir::TensorId id : a.reads) {
        const ir::Tensor *t = ctx.graph.tensor(id);
        bool identityOnly = contiguous(*t);
        bool readAtPoint = false;
        for (const auto *op : a.ops)
            for (const Expr &r : ir::collectReads(op->body))
                if (r.tensor().id == id) {
                    bool at = r.operands().size() == op->domain.size();
                    for (std::size_t d = 0; at && d < op->domain.size(); ++d)
                        at = r.operands()[d].kind() == ir::ExprKind::IterVar && r.operands()[d].name() == op->domain[d].name;
                    readAtPoint = readAtPoint || at;
                }
        if (identityOnly && readAtPoint)
            vectorInputs.push_back(id);
    }
    const std::string vecType = vec == 4 ? "float4" : vec == 2 ? "float2" : "float";
    const char *lanes[] = {"x", "y", "z", "w"};
    auto vectorizable = [&](ir::TensorId id) { return vec > 1 && ctx.graph.tensor(id)->dtype == ir::DType::F32; };
    auto storedVector = [&](ir::TensorId id) { return vectorizable(id) && contiguous(*ctx.graph.tensor(id)); };

    CudaWriter w;
    w.lines(deviceHelpers(scope));
    w.comment(headerComment(ctx));
    w.line("extern \"C\" __global__ void __launch_bounds__(" + std::to_string(threads) + ") " + k.name + "(" +
           paramList(k.params) + ")");
    w.open("");
    std::string total = "1LL";
    for (const auto &e : a.domain)
        total += " * (long long)(" + emitExpr(e, scope) + ")";
    w.line("const long long total_ = " + total + ";");
    w.line("const long long first_ = ((long long)blockIdx.x * " + std::to_string(items * threads) + " + threadIdx.x) * " +
           std::to_string(vec) + ";");
    // One element p_ of the group: its domain indices, every op's value, the stored ones. `lane` is
    // the element's lane of the vector registers (x, y, z, w), or null on the scalar path, which
    // reads and writes memory at p_ itself.
    auto emitElement = [&](const char *lane) {
        // Domain indices of the element (the compiler drops the ones nothing uses).
        w.line("long long rest_ = p_;");
        for (std::size_t d = a.domain.size(); d-- > 0;) {
            const std::string name = "d" + std::to_string(d) + "_";
            const std::string ext = "(long long)(" + emitExpr(a.domain[d], scope) + ")";
            if (d > 0) {
                w.line("const int " + name + " = (int)(rest_ % " + ext + ");");
                w.line("rest_ /= " + ext + ";");
            } else {
                w.line("const int " + name + " = (int)rest_;");
            }
        }
        w.line("(void)rest_;");
        const std::string member = lane && vec > 1 ? std::string(".") + lane : std::string();
        for (const auto *op : a.ops) {
            ExprScope s = scope;
            for (std::size_t d = 0; d < op->domain.size(); ++d)
                s.vars[op->domain[d].name] = "d" + std::to_string(d) + "_";
            s.local = [&, op, lane, member](const Expr &r, const ExprScope &) -> std::optional<std::string> {
                const ir::TensorId id = r.tensor().id;
                bool at = r.operands().size() == op->domain.size();
                for (std::size_t d = 0; at && d < op->domain.size(); ++d)
                    at = r.operands()[d].kind() == ir::ExprKind::IterVar && r.operands()[d].name() == op->domain[d].name;
                if (!at)
                    return std::nullopt;
                const std::string name = cIdentifier(r.tensor().name);
                if (std::find(vectorInputs.begin(), vectorInputs.end(), id) != vectorInputs.end()) {
                    if (!vectorizable(id) || !lane)
                        return name + "[p_]";
                    return "in_" + name + "_" + member;
                }
                if (a.isLocal(id) || a.isStored(id))
                    return "v_" + name + "_";
                return std::nullopt;
            };
            const std::string out = cIdentifier(op->output.name);
            const std::string body = emitExpr(op->body, s);
            w.line(std::string("const ") + ir::cudaTypeName(op->output.dtype) + " v_" + out + "_ = (" +
                   ir::cudaTypeName(op->output.dtype) + ")(" + body + ");");
            if (a.isStored(op->output.id)) {
                if (storedVector(op->output.id) && lane) {
                    w.line("out_" + out + "_" + member + " = v_" + out + "_;");
                } else if (contiguous(*ctx.graph.tensor(op->output.id))) {
                    w.line(out + "[p_] = v_" + out + "_;");
                } else {
                    std::vector<std::string> idx;
                    for (std::size_t d = 0; d < op->domain.size(); ++d)
                        idx.push_back("d" + std::to_string(d) + "_");
                    w.line(emitGlobalAccess(*ctx.graph.tensor(op->output.id), idx, scope) + " = v_" + out + "_;");
                }
            }
        }
    };
    // The scalar path takes a last, partial vector (the element count is not a multiple of
    // `vector`, or not known here) and every element when a buffer is not aligned to the vector
    // (a caller's pointer into the middle of an allocation): vector accesses never reach past the
    // end or fault on alignment.
    std::int64_t totalKnown = 1;
    for (const auto &e : a.domain) {
        auto n = ir::evaluateSizeExpr(e, ctx.sizes);
        totalKnown = !n.ok() || totalKnown < 0 ? -1 : totalKnown * *n;
    }
    std::vector<std::string> vectorBuffers;
    for (ir::TensorId id : vectorInputs)
        if (vectorizable(id))
            vectorBuffers.push_back(cIdentifier(ctx.graph.tensor(id)->name));
    for (ir::TensorId id : a.stored)
        if (storedVector(id))
            vectorBuffers.push_back(cIdentifier(ctx.graph.tensor(id)->name));
    const bool tail = totalKnown < 0 || totalKnown % vec != 0;
    if (!vectorBuffers.empty()) {
        std::string bits;
        for (const auto &b : vectorBuffers)
            bits += (bits.empty() ? "" : " | ") + std::string("reinterpret_cast<unsigned long long>(") + b + ")";
        w.line("const bool aligned_ = ((" + bits + ") % " + std::to_string(vec * 4) + ") == 0;");
    }
    w.line("#pragma unroll");
    w.open("for (int it_ = 0; it_ < " + std::to_string(items) + "; ++it_)");
    w.line("const long long e_ = first_ + (long long)it_ * " + std::to_string(threads * vec) + ";");
    w.line("if (e_ >= total_)");
    w.line("    return;");
    if (!vectorBuffers.empty()) {
        w.open(std::string("if (!aligned_") + (tail ? " || e_ + " + std::to_string(vec) + " > total_" : "") + ")");
        w.open("for (long long p_ = e_; p_ < e_ + " + std::to_string(vec) + " && p_ < total_; ++p_)");
        emitElement(nullptr);
        w.close();
        w.line("continue;");
        w.close();
    }
    for (ir::TensorId id : vectorInputs) {
        const ir::Tensor *t = ctx.graph.tensor(id);
        const std::string name = cIdentifier(t->name);
        if (vectorizable(id))
            w.line("const " + vecType + " in_" + name + "_ = *reinterpret_cast<const " + vecType + " *>(" + name + " + e_);");
    }
    for (ir::TensorId id : a.stored)
        if (storedVector(id))
            w.line(vecType + " out_" + cIdentifier(ctx.graph.tensor(id)->name) + "_;");
    for (int q = 0; q < vec; ++q) {
        w.open("");
        w.line("const long long p_ = e_ + " + std::to_string(q) + ";");
        emitElement(lanes[q]);
        w.close();
    }
    for (ir::TensorId id : a.stored)
        if (storedVector(id)) {
            const std::string name = cIdentifier(ctx.graph.tensor(id)->name);
            w.line("*reinterpret_cast<" + vecType + " *>(" + name + " + e_) = out_" + name + "_;");
        }
    w.close();
    w.close();
    k.source = w.str();
    Expr totalExpr = Expr(1);
    for (const auto &e : a.domain)
        totalExpr = totalExpr.isIntConst(1) ? e : totalExpr * e;
    k.grid = {ceilDivExpr(totalExpr, threads * vec * items), Expr(1), Expr(1)};
    return k;
}

} // namespace stitch::codegen
