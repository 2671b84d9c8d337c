#pragma once
// Internal to core/rubric: the helpers that replay a strategy's thread -> element mapping into
// memory streams (AccessStreams.cpp: rows, element-wise, generic; GemmStreams.cpp: gemm).
//   GroupAnalysis + decisions + sizes -> StreamBuilder -> KernelFacts::streams, branches

#include "core/rubric/KernelFacts.h"

#include "core/ir/DType.h"
#include "core/ir/ExprUtil.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>

namespace stitch::rubric::detail {

using Lanes = std::vector<std::int64_t>;
using VarMap = std::map<std::string, std::int64_t>;

inline std::int64_t evalSize(const ir::Expr &e, const ir::SizeBindings &sizes, std::int64_t fallback = 1)
{
    auto v = ir::evaluateSizeExpr(e, sizes);
    return v.ok() ? *v : fallback;
}

inline std::int64_t ceilDiv(std::int64_t a, std::int64_t b)
{
    return b > 0 ? (a + b - 1) / b : 0;
}

/// Global addresses of a tensor's elements: a base far from every other tensor, row-major strides.
struct TensorLayout {
    std::int64_t base = 0;
    std::vector<std::int64_t> extents, strides;
    int elementBytes = 4;
    std::int64_t at(const std::vector<std::int64_t> &idx) const
    {
        std::int64_t off = 0;
        for (std::size_t d = 0; d < idx.size() && d < strides.size(); ++d)
            off += idx[d] * strides[d];
        return base + off * elementBytes;
    }
};

inline TensorLayout layoutOf(const ir::Tensor &t, const ir::SizeBindings &sizes)
{
    TensorLayout l;
    l.base = (static_cast<std::int64_t>(t.id) + 1) << 40;
    l.elementBytes = ir::dtypeSize(t.dtype);
    auto ext = t.shape.evaluate(sizes);
    if (ext.ok()) {
        l.extents = *ext;
        l.strides = ir::rowMajorStrides(*ext);
    }
    return l;
}

/// Splits a flat row-major index over extents into per-dimension indices.
inline std::vector<std::int64_t> unflatten(std::int64_t flat, const std::vector<std::int64_t> &extents)
{
    std::vector<std::int64_t> idx(extents.size(), 0);
    for (std::size_t d = extents.size(); d-- > 0;) {
        const std::int64_t e = std::max<std::int64_t>(extents[d], 1);
        idx[d] = flat % e;
        flat /= e;
    }
    return idx;
}

/// The (block, first thread) of the two sampled warps.
inline std::vector<std::pair<std::int64_t, int>> sampleWarps(std::int64_t blocks, int threads)
{
    std::vector<std::pair<std::int64_t, int>> out{{0, 0}};
    const int warps = std::max(threads / 32, 1);
    if (blocks > 1 || warps > 1)
        out.push_back({blocks / 2, (warps / 2) * 32});
    return out;
}

/// Adds the streams of one kernel to its facts; one method per strategy.
struct StreamBuilder {
    KernelFacts &facts;
    const schedule::Problem &problem;
    const schedule::GroupAnalysis &a;

    const ir::SizeBindings &sizes() const { return problem.sizes; }
    const ir::Tensor &tensor(ir::TensorId id) const { return *problem.graph.tensor(id); }

    /// Adds a stream; `lane(block, thread)` gives the lane's byte address or -1.
    void add(std::string what, bool shared, bool store, int bytes, double requests,
             const std::function<std::int64_t(std::int64_t, int)> &lane)
    {
        AccessStream s;
        s.what = std::move(what);
        s.shared = shared;
        s.store = store;
        s.bytesPerLane = bytes;
        s.requests = requests;
        for (auto [block, first] : sampleWarps(facts.blocks, facts.threads)) {
            Lanes w(32, -1);
            for (int l = 0; l < 32 && first + l < facts.threads; ++l)
                w[static_cast<std::size_t>(l)] = lane(block, first + l);
            s.warps.push_back(std::move(w));
        }
        facts.streams.push_back(std::move(s));
    }

    bool isGlobalRead(ir::TensorId id) const
    {
        return !a.isLocal(id) && std::find(a.reads.begin(), a.reads.end(), id) != a.reads.end();
    }

    /// Reads of global tensors in an op's body and init, each expression once.
    std::vector<ir::Expr> globalReads(const ir::ComputeOp &op, bool body, bool init, ir::TensorId skipA = -1,
                                      ir::TensorId skipB = -1) const
    {
        std::vector<ir::Expr> out;
        std::set<std::string> seen;
        auto take = [&](const ir::Expr &e) {
            if (!e.defined())
                return;
            for (const auto &r : ir::collectReads(e)) {
                const auto id = r.tensor().id;
                if (id == skipA || id == skipB || !isGlobalRead(id))
                    continue;
                if (seen.insert(r.toString()).second)
                    out.push_back(r);
            }
        };
        if (body)
            take(op.body);
        if (init && op.reduction)
            take(op.reduction->init);
        return out;
    }

    /// Address of a read given its iteration variables, or -1.
    std::int64_t readAddress(const ir::Expr &read, const VarMap &vars) const
    {
        const TensorLayout l = layoutOf(tensor(read.tensor().id), sizes());
        std::vector<std::int64_t> idx;
        for (const auto &o : read.operands()) {
            auto v = evalIndex(o, sizes(), vars);
            if (!v)
                return -1;
            idx.push_back(*v);
        }
        return l.at(idx);
    }

    void gemm();
    void mmaFragments(); ///< math=tf32_mma: the mma.sync fragment loads (GemmStreams.cpp)
    /// math=tf32_wgmma: the cp.async fill of an operand's tile (the descriptor's swizzled one or the
    /// register operand's padded one) and the register operand's fragment loads (GemmStreams.cpp).
    /// Both take the kernel's layout, as gemm() derived it.
    void wgmmaFill(const schedule::WgmmaLayout &wl, const std::string &name, bool descriptor, bool kFastest, int width,
                   int perRow, double requests);
    void wgmmaFragments(const schedule::WgmmaLayout &wl, double requests);
    void gemmSum();
    void gemmTranspose(); ///< transpose_b=on: the pass that writes B transposed (GemmStreams.cpp)
    void row();
    void elementwise();
    void generic();
};

} // namespace stitch::rubric::detail
