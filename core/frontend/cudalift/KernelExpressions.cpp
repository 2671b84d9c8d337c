// KernelExec: C expressions of device code -> ir::Expr (math built-ins, macros, inlined
// __device__ functions, buffer and shared-memory reads).
#include "core/frontend/cudalift/ExprTools.h"
#include "core/frontend/cudalift/KernelExec.h"
#include "core/ir/ExprUtil.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace stitch::frontend::cudalift {

using ir::Expr;

namespace {

constexpr int kMaxMacroDepth = 32;
/// Nested evaluations of one kernel expression (each parenthesis, operand or call argument is one).
/// A nested device-function call costs three frames, 22 KB of stack under ASan at -O1: 400 calls
/// overflowed its 8 MB, 256 (clang's default -fbracket-depth) leave room.
constexpr int kMaxEvalDepth = 256;

Expr toBool(const Expr &x)
{
    if (x.dtype() == ir::DType::Bool)
        return x;
    if (x.kind() == ir::ExprKind::IntConst)
        return ir::boolConst(x.intValue() != 0);
    return ir::ne(x, ir::isFloat(x.dtype()) ? ir::floatConst(0.0, x.dtype()) : ir::intConst(0, x.dtype()));
}

std::optional<std::int64_t> intValue(const Expr &x)
{
    if (x.defined() && x.kind() == ir::ExprKind::IntConst && x.dtype() != ir::DType::Bool)
        return x.intValue();
    return std::nullopt;
}

std::optional<std::int64_t> sizeOfType(std::string_view text)
{
    auto t = scalarTypeFromText(text);
    if (!t)
        return std::nullopt;
    return ir::dtypeSize(*t);
}

} // namespace

Expr KernelExec::evalCondition(TSNode e, State &s)
{
    return m_math.simplify(toBool(eval(e, s)));
}

Expr KernelExec::eval(TSNode e, State &s)
{
    // Deeply nested source (thousands of parentheses) must not exhaust the stack.
    struct DepthGuard {
        int &depth;
        explicit DepthGuard(int &d) : depth(d) { ++depth; }
        ~DepthGuard() { --depth; }
    } guard(m_evalDepth);
    if (m_evalDepth > kMaxEvalDepth)
        refuse(e, "the expression is nested too deeply");
    const auto k = kind(e);
    if (k == "number_literal") {
        auto v = parseNumber(m_tree->text(e));
        if (!v)
            refuse(e, "this number literal is not understood");
        return v->isFloat ? ir::floatConst(v->floatValue, v->dtype) : ir::intConst(v->intValue, v->dtype);
    }
    if (k == "true" || k == "false")
        return ir::boolConst(k == "true");
    if (k == "identifier")
        return evalIdentifier(e, s);
    if (k == "parenthesized_expression") {
        const auto inner = namedChildren(e);
        if (inner.size() != 1)
            refuse(e, "unsupported parenthesized expression");
        return eval(inner.front(), s);
    }
    if (k == "field_expression")
        return evalField(e, s);
    if (k == "binary_expression")
        return evalBinary(e, s);
    if (k == "unary_expression") {
        const auto op = operatorOf(e);
        const TSNode arg = field(e, "argument");
        if (op == "!")
            return negateCondition(evalCondition(arg, s));
        Expr x = eval(arg, s);
        if (op == "+")
            return x;
        if (op == "-") {
            if (x.kind() == ir::ExprKind::IntConst && x.dtype() != ir::DType::Bool)
                return ir::intConst(-x.intValue(), x.dtype());
            if (x.kind() == ir::ExprKind::FloatConst)
                return ir::floatConst(-x.floatValue(), x.dtype());
            return ir::neg(x);
        }
        refuse(e, "bitwise complement has no tensor-expression equivalent");
    }
    if (k == "conditional_expression") {
        const Expr c = evalCondition(field(e, "condition"), s);
        if (isBoolConst(c, true))
            return eval(field(e, "consequence"), s);
        if (isBoolConst(c, false))
            return eval(field(e, "alternative"), s);
        Expr a = eval(field(e, "consequence"), s);
        Expr b = eval(field(e, "alternative"), s);
        const ir::DType t = ir::promoteTypes(a.dtype(), b.dtype());
        return selectOrFold(c, convertTo(a, t), convertTo(b, t));
    }
    if (k == "cast_expression") {
        const TSNode typeNode = field(e, "type");
        const std::string typeText = textOf(typeNode);
        if (typeText.find('*') != std::string::npos)
            refuse(e, "a pointer cast used as a value");
        auto t = scalarTypeFromText(typeText);
        if (!t)
            refuse(e, "cast to an unsupported type '" + typeText + "'");
        return convertTo(eval(field(e, "value"), s), *t);
    }
    if (k == "call_expression")
        return evalCall(e, s);
    if (k == "subscript_expression")
        return evalSubscript(e, s);
    if (k == "pointer_expression") {
        if (operatorOf(e) == "*")
            return readBuffer(evalPointer(field(e, "argument"), s), Expr(0), s, e);
        refuse(e, "taking an address is only meaningful for pointers, which the graph does not model");
    }
    if (k == "sizeof_expression") {
        const TSNode t = field(e, "type");
        auto size = sizeOfType(ts_node_is_null(t) ? std::string_view() : m_tree->text(t));
        if (!size)
            refuse(e, "sizeof of an unsupported type");
        return ir::intConst(*size);
    }
    if (k == "assignment_expression" || k == "update_expression")
        refuse(e, "an assignment inside an expression", "write it as a separate statement");
    refuse(e, "this kind of expression (" + std::string(k) + ") is not supported by the lifter");
}

Expr KernelExec::evalIdentifier(TSNode e, State &s)
{
    const std::string name = textOf(e);
    if (Local *local = lookup(s, name)) {
        if (local->kind == LocalKind::Pointer && local->globalScalar)
            return readBuffer(local->pointer, Expr(0), s, e);
        if (local->kind != LocalKind::Scalar)
            refuse(e, "'" + name + "' is a pointer or array used as a value");
        return local->value.defined() ? local->value : ir::var("%uninit");
    }
    if (const NamedConstant *c = m_program.macros->find(name))
        return evalNamedConstant(*c, e, s);
    const double inf = std::numeric_limits<double>::infinity();
    if (name == "INFINITY" || name == "HUGE_VALF")
        return ir::floatConst(inf, ir::DType::F32);
    if (name == "NAN")
        return ir::floatConst(std::numeric_limits<double>::quiet_NaN(), ir::DType::F32);
    if (name == "FLT_MAX")
        return ir::floatConst(static_cast<double>(std::numeric_limits<float>::max()), ir::DType::F32);
    if (name == "FLT_MIN")
        return ir::floatConst(static_cast<double>(std::numeric_limits<float>::min()), ir::DType::F32);
    if (name == "M_PI")
        return ir::floatConst(3.14159265358979323846, ir::DType::F64);
    if (name == "warpSize")
        return ir::intConst(32);
    refuse(e, "unknown identifier '" + name + "'");
}

Expr KernelExec::evalNamedConstant(const NamedConstant &c, TSNode site, State &s)
{
    if (c.functionLike)
        refuse(site, "macro '" + c.name + "' is used without arguments");
    if (ts_node_is_null(c.value))
        refuse(site, "macro '" + c.name + "' (" + fragment(c.text) + ") is not an expression");
    if (++m_macroDepth > kMaxMacroDepth)
        refuse(site, "macro expansion is too deep (recursive #define?)");
    const SyntaxTree *savedTree = m_tree;
    const auto savedSite = m_site;
    if (!m_site)
        m_site = where(site);
    m_tree = c.tree;
    Expr value;
    try {
        value = m_math.simplify(eval(c.value, s));
    } catch (...) {
        m_tree = savedTree;
        m_site = savedSite;
        --m_macroDepth;
        throw;
    }
    m_tree = savedTree;
    m_site = savedSite;
    --m_macroDepth;
    // A name for a plain non-negative integer is a size of the program: keep it symbolic.
    if (value.kind() == ir::ExprKind::IntConst && value.dtype() != ir::DType::Bool && value.intValue() >= 0) {
        SizeDefinition d{c.name, value.intValue(), c.location, c.valueRange, true};
        const Expr size = m_program.sizes->define(d);
        m_math.setSizeLowerBound(c.name, std::min<std::int64_t>(value.intValue(), 1));
        return size;
    }
    if (ir::isInteger(value.dtype()) && !ir::collectSizeVars(value).empty() && ir::collectIterVars(value).empty()
        && !readsAny(value, [](const ir::TensorRef &) { return true; }))
        return m_program.sizes->defineDerived(c.name, value, true);
    return value;
}

Expr KernelExec::evalField(TSNode e, State &s)
{
    (void)s;
    const std::string base = textOf(field(e, "argument"));
    const std::string member = textOf(field(e, "field"));
    const int dim = member == "x" ? 0 : member == "y" ? 1 : member == "z" ? 2 : -1;
    if (dim >= 0) {
        const auto d = static_cast<std::size_t>(dim);
        if (base == "threadIdx")
            return ir::var(threadVar(dim));
        if (base == "blockIdx")
            return ir::var(blockVar(dim));
        if (base == "blockDim")
            return m_launch.block[d];
        if (base == "gridDim")
            return m_launch.grid[d];
    }
    refuse(e, "member access '" + textOf(e) + "' is not supported (structs are not modelled)");
}

Expr KernelExec::evalBinary(TSNode e, State &s)
{
    const std::string op(operatorOf(e));
    const TSNode left = field(e, "left");
    const TSNode right = field(e, "right");
    if (op == "&&" || op == "||") {
        const Expr a = evalCondition(left, s);
        const Expr b = evalCondition(right, s);
        return m_math.simplify(op == "&&" ? ir::logicalAnd(a, b) : ir::logicalOr(a, b));
    }
    if ((op == "+" || op == "-") && (isPointerExpression(left, s) || isPointerExpression(right, s)))
        refuse(e, "pointer arithmetic used as a value");
    const Expr a = eval(left, s);
    const Expr b = eval(right, s);
    if (op == "+") return a + b;
    if (op == "-") return a - b;
    if (op == "*") return a * b;
    if (op == "/") return a / b;
    if (op == "%") {
        if (!ir::isInteger(a.dtype()) || !ir::isInteger(b.dtype()))
            refuse(e, "'%' on floating-point values", "use fmodf");
        return a % b;
    }
    if (op == "<") return ir::lt(a, b);
    if (op == "<=") return ir::le(a, b);
    if (op == ">") return ir::gt(a, b);
    if (op == ">=") return ir::ge(a, b);
    if (op == "==") return ir::eq(a, b);
    if (op == "!=") return ir::ne(a, b);
    const auto shift = intValue(b);
    const bool nonNegative = [&] {
        auto p = m_math.toPoly(a);
        return p && m_math.nonNegative(*p);
    }();
    if (ir::isInteger(a.dtype()) && shift && *shift >= 0 && *shift < 62) {
        const Expr power = ir::intConst(std::int64_t{1} << *shift, a.dtype());
        if (op == "<<")
            return a * power;
        if (op == ">>" && nonNegative)
            return a / power;
    }
    if (op == "&" && shift && *shift >= 0 && ((*shift + 1) & *shift) == 0 && nonNegative)
        return a % ir::intConst(*shift + 1, a.dtype());
    refuse(e, "bitwise operator '" + op + "' has no tensor-expression equivalent here",
           "use arithmetic (*, /, %) on non-negative integers");
}

TSNode KernelExec::subscriptBase(TSNode e, std::vector<TSNode> &indices) const
{
    while (kind(e) == "subscript_expression") {
        TSNode index = field(e, "index");
        if (ts_node_is_null(index)) {
            const auto list = namedChildren(field(e, "indices"));
            if (list.size() != 1)
                refuse(e, "a subscript with " + std::to_string(list.size()) + " indices");
            index = list.front();
        }
        indices.push_back(index);
        e = field(e, "argument");
    }
    std::reverse(indices.begin(), indices.end());
    return e;
}

Expr KernelExec::evalSubscript(TSNode e, State &s)
{
    std::vector<TSNode> indexNodes;
    const TSNode base = subscriptBase(e, indexNodes);
    if (kind(base) == "identifier") {
        if (Local *local = lookup(s, textOf(base)); local && local->kind == LocalKind::Shared) {
            std::vector<Expr> index;
            for (TSNode i : indexNodes)
                index.push_back(m_math.simplify(eval(i, s)));
            return readShared(local->shared, index, s, e);
        }
    }
    if (indexNodes.size() != 1)
        refuse(e, "multi-dimensional subscript of a pointer");
    const PointerValue p = evalPointer(base, s);
    return readBuffer(p, eval(indexNodes.front(), s), s, e);
}

bool KernelExec::isPointerExpression(TSNode e, State &s)
{
    const auto k = kind(e);
    if (k == "identifier") {
        const Local *local = lookup(s, textOf(e));
        return local && local->kind == LocalKind::Pointer;
    }
    if (k == "parenthesized_expression") {
        const auto inner = namedChildren(e);
        return inner.size() == 1 && isPointerExpression(inner.front(), s);
    }
    if (k == "binary_expression") {
        const auto op = operatorOf(e);
        return (op == "+" || op == "-") && isPointerExpression(field(e, "left"), s);
    }
    if (k == "pointer_expression")
        return operatorOf(e) == "&";
    if (k == "cast_expression")
        return m_tree->text(field(e, "type")).find('*') != std::string_view::npos;
    return false;
}

PointerValue KernelExec::evalPointer(TSNode e, State &s)
{
    const auto k = kind(e);
    if (k == "identifier") {
        const Local *local = lookup(s, textOf(e));
        if (!local || local->kind != LocalKind::Pointer)
            refuse(e, "'" + textOf(e) + "' is not a pointer to a buffer of this program");
        return local->pointer;
    }
    if (k == "parenthesized_expression") {
        const auto inner = namedChildren(e);
        if (inner.size() == 1)
            return evalPointer(inner.front(), s);
    }
    if (k == "binary_expression") {
        const auto op = operatorOf(e);
        if ((op == "+" || op == "-") && isPointerExpression(field(e, "left"), s)) {
            PointerValue p = evalPointer(field(e, "left"), s);
            const Expr delta = eval(field(e, "right"), s);
            p.offset = m_math.simplify(op == "+" ? p.offset + delta : p.offset - delta);
            return p;
        }
        if (op == "+" && isPointerExpression(field(e, "right"), s)) {
            PointerValue p = evalPointer(field(e, "right"), s);
            p.offset = m_math.simplify(p.offset + eval(field(e, "left"), s));
            return p;
        }
    }
    if (k == "pointer_expression" && operatorOf(e) == "&") {
        const TSNode arg = field(e, "argument");
        if (kind(arg) == "subscript_expression") {
            std::vector<TSNode> indexNodes;
            const TSNode base = subscriptBase(arg, indexNodes);
            if (indexNodes.size() == 1) {
                PointerValue p = evalPointer(base, s);
                p.offset = m_math.simplify(p.offset + eval(indexNodes.front(), s));
                return p;
            }
        }
    }
    if (k == "cast_expression")
        return evalPointer(field(e, "value"), s);
    refuse(e, "this pointer expression is not supported");
}

Expr KernelExec::readShared(int array, const std::vector<Expr> &index, State &s, TSNode site)
{
    const SharedArray &a = m_sharedArrays[static_cast<std::size_t>(array)];
    if (index.size() != a.dims.size())
        refuse(site, "shared array '" + a.name + "' has " + std::to_string(a.dims.size()) + " dimensions");
    recordShared(array, index, false, s, site);
    if (m_recordOnly)
        return placeholder(a.name, a.dtype);
    const SharedStore *store = nullptr;
    for (const auto &[key, st] : s.shared) {
        if (st.array != array)
            continue;
        if (st.phase == s.phase)
            refuse(site, "'" + a.name + "' is read in the same __syncthreads() phase in which it is written",
                   "separate the tile's stores and reads with __syncthreads()");
        if (store && store->phase == st.phase)
            refuse(site, "each thread writes more than one element of '" + a.name + "'",
                   "the lifter recognises tiles where each thread stores exactly its own element");
        if (!store || st.phase > store->phase)
            store = &st;
    }
    if (!store && s.sharedWrittenInLoop.count(array))
        refuse(site, "'" + a.name + "' is written inside a loop (at " + s.sharedWrittenInLoop.at(array).toString() +
                         "), so a thread may write several of its elements",
               "the lifter recognises tiles where each thread stores exactly its own element, outside loops");
    if (!store)
        refuse(site, "'" + a.name + "' is read before any thread writes it");
    // The tile must be written by every thread of the block at its own (threadIdx.y, threadIdx.x).
    const std::size_t rank = a.dims.size();
    if (rank > 2)
        refuse(site, "shared arrays of rank " + std::to_string(rank) + " are not recognised as tiles");
    for (const Expr &g : store->guard) {
        (void)g;
        refuse(site, "'" + a.name + "' is written only by some threads (the store at " + store->where.toString()
                         + " is conditional)",
               "store a value in every thread, e.g. `tile[ty][tx] = inside ? A[...] : 0.0f;`");
    }
    std::map<std::string, Expr> substitution;
    for (std::size_t d = 0; d < rank; ++d) {
        const int threadDim = static_cast<int>(rank - 1 - d);
        const Expr &stored = store->index[d];
        if (stored.kind() != ir::ExprKind::IterVar || stored.name() != threadVar(threadDim))
            refuse(site, "'" + a.name + "' is stored at [" + stored.toString()
                             + "], not at the storing thread's own coordinates",
                   "store tile[threadIdx.y][threadIdx.x] (or tile[threadIdx.x] in 1-D blocks)");
        auto dim = m_math.toPoly(a.dims[d]);
        auto block = m_math.toPoly(m_launch.block[static_cast<std::size_t>(threadDim)]);
        if (!dim || !block || !(*dim - *block).isZero())
            refuse(site, "'" + a.name + "' has extent " + a.dims[d].toString() + " but the block has "
                             + m_launch.block[static_cast<std::size_t>(threadDim)].toString() + " threads in that dimension",
                   "size tiles like the thread block so every element is written");
        auto i = m_math.toPoly(index[d]);
        if (!i || !m_math.nonNegative(*i) || !m_math.less(*i, *dim))
            refuse(site, "cannot prove that index " + index[d].toString() + " stays inside '" + a.name + "'");
        substitution[threadVar(threadDim)] = index[d];
    }
    for (int d = static_cast<int>(rank); d < 3; ++d) {
        auto extent = m_math.toPoly(m_launch.block[static_cast<std::size_t>(d)]);
        if (!extent || extent->constantValue() != 1)
            refuse(site, "several threads of the block store the same element of '" + a.name + "' (block dimension "
                             + std::string(1, "xyz"[d]) + " is not 1)");
    }
    if (readsAny(store->value, [](const ir::TensorRef &t) { return t.id < 0; }))
        refuse(site, "'" + a.name + "' holds a running value of another thread");
    s.lastSharedReadPhase = s.phase;
    return m_math.simplify(ir::substitute(store->value, substitution));
}

} // namespace stitch::frontend::cudalift
