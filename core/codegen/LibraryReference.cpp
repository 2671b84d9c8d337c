#include "core/codegen/LibraryReference.h"

#include "core/ir/GraphBuilder.h"
#include "core/schedule/GroupAnalysis.h"

#include <map>
#include <vector>

namespace stitch::codegen {

Result<LibraryReference> cublasReference(const schedule::Problem &problem, const schedule::Schedule &schedule)
{
    const ir::Graph &graph = problem.graph;
    LibraryReference out;
    ir::GraphBuilder builder(graph.name() + "_cublas");
    std::map<std::string, ir::Tensor> made; // reference tensors by name
    std::vector<std::string> beyond;        // what the program computes that cuBLAS does not
    auto extent = [&](const ir::Expr &e) { return ir::evaluateSizeExpr(e, problem.sizes); };
    // Inputs drawn by the default init, as the generated program's (codegen::toLaunchPlan) are.
    auto matrix = [](const std::string &name, std::vector<std::int64_t> dims, runner::BufferRole role) {
        runner::BufferSpec b;
        b.name = name;
        b.count = static_cast<std::uint64_t>(dims.at(0) * dims.at(1));
        b.shape = std::move(dims);
        b.role = role;
        return b;
    };
    for (const schedule::KernelGroup &group : schedule.groups) {
        if (group.strategy != schedule::Strategy::Gemm)
            continue;
        auto analysis = schedule::analyzeGroup(graph, group.ops, schedule::Strategy::Gemm);
        if (!analysis)
            return annotate(analysis.error(), "kernel " + group.name);
        const schedule::GroupAnalysis &g = *analysis;
        const ir::ComputeOp &head = *g.ops.front();
        auto m = extent(g.domain.at(0)), n = extent(g.domain.at(1)), k = extent(g.k);
        if (!m || !n || !k)
            return !m ? m.error() : !n ? n.error() : k.error();
        const ir::Tensor *a = graph.tensor(g.a), *b = graph.tensor(g.b), *c = graph.tensor(head.output.id);
        // cuBLAS reads packed matrices: each operand must be exactly its [rows, columns].
        auto packed = [&](const ir::Tensor &t, std::int64_t rows, std::int64_t cols) -> Status {
            auto dims = t.shape.evaluate(problem.sizes);
            if (!dims)
                return dims.error();
            if (*dims == std::vector<std::int64_t>{rows, cols})
                return Ok{};
            const std::string want = "[" + std::to_string(rows) + ", " + std::to_string(cols) + "]";
            return makeError(ErrorKind::InvalidArgument, head.name + " reads " + t.name + " " + t.shape.toString() +
                                                             ", not a packed " + want +
                                                             " matrix: cuBLAS cannot read it");
        };
        if (auto st = packed(*a, g.aRowMajor ? *m : *k, g.aRowMajor ? *k : *m); !st)
            return st.error();
        if (auto st = packed(*b, g.bRowMajor ? *k : *n, g.bRowMajor ? *n : *k); !st)
            return st.error();
        if (auto st = packed(*c, *m, *n); !st)
            return st.error();

        auto operand = [&](const ir::Tensor &t) {
            if (auto it = made.find(t.name); it != made.end())
                return it->second; // an earlier GEMM's product: cuBLAS computed it first
            const ir::Tensor r = builder.input(t.name, ir::DType::F32, t.shape);
            made.emplace(t.name, r);
            out.plan.buffers.push_back(matrix(t.name, *t.shape.evaluate(problem.sizes), runner::BufferRole::Input));
            return r;
        };
        const ir::Tensor ra = operand(*a), rb = operand(*b);
        if (made.count(c->name))
            return makeError(ErrorKind::InvalidArgument,
                             head.name + " writes " + c->name + ", which an earlier GEMM reads");
        const ir::Tensor rc = builder.output(c->name, ir::DType::F32, c->shape);
        made.emplace(c->name, rc);
        out.plan.buffers.push_back(matrix(c->name, {*m, *n}, runner::BufferRole::Output));
        const ir::Expr i = ir::var("i"), j = ir::var("j"), kv = ir::var("k");
        const ir::Expr readA = g.aRowMajor ? ra(i, kv) : ra(kv, i), readB = g.bRowMajor ? rb(kv, j) : rb(j, kv);
        builder.compute(rc, {i, j}, ir::reduceSum({{"k", g.k}}), readA * readB);

        runner::LibraryCall call;
        call.math = schedule.precision == schedule::Precision::TF32 ? runner::LibraryCall::Math::TF32
                                                                    : runner::LibraryCall::Math::FP32;
        call.a = a->name, call.b = b->name, call.c = c->name;
        call.m = *m, call.n = *n, call.k = *k;
        call.transA = !g.aRowMajor, call.transB = !g.bRowMajor;
        out.flops += call.flops();
        out.bytes += 4.0 * static_cast<double>(*m * *k + *k * *n + *m * *n);
        out.covers += (out.covers.empty() ? "" : ", ") + c->name + " = " + a->name + (call.transA ? "^T" : "") + " " +
                      b->name + (call.transB ? "^T" : "") + " (" + std::to_string(*m) + "x" + std::to_string(*n) + "x" +
                      std::to_string(*k) + (call.math == runner::LibraryCall::Math::TF32 ? ", TF32" : "") + ")";
        out.plan.launches.push_back(runner::KernelLaunch::libraryCall(call));

        if (head.reduction->init.defined())
            beyond.push_back(head.name + " starts its sum from " + head.reduction->init.toString());
        if (g.ops.size() > 1) {
            std::string epilogue;
            for (std::size_t e = 1; e < g.ops.size(); ++e)
                epilogue += (epilogue.empty() ? "" : ", ") + g.ops[e]->name;
            beyond.push_back("the epilogue fused into " + group.name + " (" + epilogue + ")");
        }
    }
    if (out.plan.launches.empty())
        return makeError(ErrorKind::InvalidArgument, "the schedule has no GEMM kernel");
    std::vector<std::string> others;
    for (const schedule::KernelGroup &group : schedule.groups)
        if (group.strategy != schedule::Strategy::Gemm)
            others.push_back(group.name);
    if (!others.empty()) {
        std::string list;
        for (const auto &o : others)
            list += (list.empty() ? "" : ", ") + o;
        beyond.push_back("the program's other kernels (" + list + ")");
    }
    if (!beyond.empty()) {
        std::string list;
        for (const auto &b : beyond)
            list += (list.empty() ? "" : "; ") + b;
        out.note = "not part of cuBLAS, neither run nor timed here: " + list +
                   ". Only cuBLAS's products are verified (against the CPU interpreter)";
    }
    auto built = builder.build();
    if (!built)
        return annotate(built.error(), "the cuBLAS reference graph");
    out.reference.graph = std::move(*built);
    out.reference.sizes = problem.sizes;
    return out;
}

} // namespace stitch::codegen
