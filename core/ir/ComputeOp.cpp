#include "core/ir/ComputeOp.h"

#include "core/ir/ExprUtil.h"

#include <algorithm>
#include <limits>

namespace stitch::ir {

Expr IterVar::upperBound() const
{
    if (lowerBound.isIntConst(0))
        return extent;
    if (lowerBound.defined() && extent.defined() && lowerBound.kind() == ExprKind::IntConst
        && extent.kind() == ExprKind::IntConst) {
        return intConst(lowerBound.intValue() + extent.intValue(), promoteTypes(lowerBound.dtype(), extent.dtype()));
    }
    return lowerBound + extent;
}

std::string IterVar::toString() const
{
    if (lowerBound.isIntConst(0))
        return name + " < " + extent.toString();
    return name + " in [" + lowerBound.toString() + ", " + upperBound().toString() + ")";
}

const char *reduceKindName(ReduceKind kind)
{
    switch (kind) {
    case ReduceKind::Sum: return "sum";
    case ReduceKind::Max: return "max";
    case ReduceKind::Min: return "min";
    case ReduceKind::Prod: return "prod";
    }
    return "unknown";
}

Expr reductionIdentity(ReduceKind kind, DType type)
{
    const bool floating = isFloat(type);
    switch (kind) {
    case ReduceKind::Sum:
        return floating ? floatConst(0.0, type) : intConst(0, type);
    case ReduceKind::Prod:
        return floating ? floatConst(1.0, type) : intConst(1, type);
    case ReduceKind::Max:
        if (floating)
            return floatConst(-std::numeric_limits<double>::infinity(), type);
        if (type == DType::I32)
            return intConst(std::numeric_limits<std::int32_t>::min(), type);
        return intConst(type == DType::Bool ? 0 : std::numeric_limits<std::int64_t>::min(), type);
    case ReduceKind::Min:
        if (floating)
            return floatConst(std::numeric_limits<double>::infinity(), type);
        if (type == DType::I32)
            return intConst(std::numeric_limits<std::int32_t>::max(), type);
        return intConst(type == DType::Bool ? 1 : std::numeric_limits<std::int64_t>::max(), type);
    }
    return floatConst(0.0, type);
}

Expr Reduction::initValue(DType type) const
{
    return init.defined() ? init : reductionIdentity(kind, type);
}

Reduction reduceSum(std::vector<IterVar> vars, Expr init)
{
    return Reduction{ReduceKind::Sum, std::move(vars), std::move(init)};
}

Reduction reduceMax(std::vector<IterVar> vars, Expr init)
{
    return Reduction{ReduceKind::Max, std::move(vars), std::move(init)};
}

Reduction reduceMin(std::vector<IterVar> vars, Expr init)
{
    return Reduction{ReduceKind::Min, std::move(vars), std::move(init)};
}

Reduction reduceProd(std::vector<IterVar> vars, Expr init)
{
    return Reduction{ReduceKind::Prod, std::move(vars), std::move(init)};
}

Expr ComputeOp::outputAccess() const
{
    std::vector<Expr> indices;
    indices.reserve(domain.size());
    for (const IterVar &iv : domain)
        indices.push_back(iv.var());
    return read(output, std::move(indices));
}

std::vector<IterVar> ComputeOp::allIterVars() const
{
    std::vector<IterVar> vars = domain;
    if (reduction)
        vars.insert(vars.end(), reduction->vars.begin(), reduction->vars.end());
    return vars;
}

std::vector<TensorRef> ComputeOp::inputs() const
{
    std::vector<TensorRef> tensors;
    auto collect = [&](const Expr &e) {
        for (const Expr &r : collectReads(e)) {
            auto same = [&](const TensorRef &t) { return t.id == r.tensor().id; };
            if (std::none_of(tensors.begin(), tensors.end(), same))
                tensors.push_back(r.tensor());
        }
    };
    for (const IterVar &iv : domain) {
        collect(iv.lowerBound);
        collect(iv.extent);
    }
    if (reduction) {
        collect(reduction->init);
        for (const IterVar &iv : reduction->vars) {
            collect(iv.lowerBound);
            collect(iv.extent);
        }
    }
    collect(body);
    return tensors;
}

bool ComputeOp::reads(TensorId id) const
{
    const std::vector<TensorRef> tensors = inputs();
    return std::any_of(tensors.begin(), tensors.end(), [&](const TensorRef &t) { return t.id == id; });
}

std::string ComputeOp::toString() const
{
    std::string text = outputAccess().toString() + " = ";
    if (reduction) {
        text += reduceKindName(reduction->kind);
        text += '(';
        for (std::size_t i = 0; i < reduction->vars.size(); ++i) {
            if (i > 0)
                text += ", ";
            text += reduction->vars[i].name;
        }
        if (reduction->init.defined())
            text += (reduction->vars.empty() ? "init=" : ", init=") + reduction->init.toString();
        text += ") ";
    }
    return text + body.toString();
}

std::string ComputeOp::domainString() const
{
    std::string text;
    for (const IterVar &iv : allIterVars()) {
        if (!text.empty())
            text += ", ";
        text += iv.toString();
    }
    return text;
}

} // namespace stitch::ir
