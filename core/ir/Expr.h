#pragma once
// Tensor expressions: immutable trees of constants, variables, tensor reads and operators.
//   CUDA kernel (frontend) / GraphBuilder -> Expr -> ComputeOp body -> Interpreter, codegen, rubric
// Nodes are shared and never mutated, so a sub-expression can appear in several ops without copies.

#include "core/ir/DType.h"

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace stitch::ir {

/// Index of a tensor in its Graph.
using TensorId = int;

/// How an expression names a tensor. The id is what identifies it; the name and element type
/// travel along so that an expression can be printed and typed without its Graph.
struct TensorRef {
    TensorId id = -1;
    std::string name;
    DType dtype = DType::F32;

    bool operator==(const TensorRef &) const = default;
};

enum class ExprKind {
    IntConst,   ///< integer or bool constant (intValue)
    FloatConst, ///< floating constant (floatValue)
    IterVar,    ///< iteration variable of the enclosing ComputeOp (name)
    SizeVar,    ///< symbolic size such as M, bound when the graph runs (name)
    Read,       ///< tensor element: tensor[operands...]
    Unary,      ///< unaryOp(operand 0)
    Binary,     ///< binaryOp(operand 0, operand 1)
    Select,     ///< operand 0 ? operand 1 : operand 2, evaluating only the chosen branch
    Cast,       ///< operand 0 converted to dtype
};

enum class UnaryOp { Neg, Abs, Exp, Log, Sqrt, Rsqrt, Tanh, Sigmoid, Erf, Relu, Floor, Ceil, Sin, Cos, Not };

/// Div on two integers truncates toward zero and Mod is the matching remainder (C's / and %);
/// FloorDiv rounds toward negative infinity. And/Or evaluate their right side only when needed.
enum class BinaryOp {
    Add, Sub, Mul, Div, Mod, FloorDiv, Min, Max, Pow,
    Lt, Le, Gt, Ge, Eq, Ne, And, Or,
};

/// Lower-case function name of the operator, as the printer writes it: "exp", "rsqrt", "not".
const char *unaryOpName(UnaryOp op);
/// Lower-case name: "add", "floordiv", "lt", ...
const char *binaryOpName(BinaryOp op);
/// Lt, Le, Gt, Ge, Eq, Ne.
bool isComparison(BinaryOp op);

struct ExprNode;

template <typename T>
concept Number = std::is_arithmetic_v<T> && !std::is_same_v<T, bool>;

/// A handle to an immutable expression node; cheap to copy. A default-constructed Expr is
/// undefined (defined() is false); Graph::validate reports undefined expressions in a graph.
///
/// Numbers convert implicitly: an integer becomes an int32 constant (int64 when the C++ type is
/// wider than 32 bits) and a floating number a float32 constant whose value is kept in double.
class Expr {
public:
    Expr() = default;
    template <Number T>
    Expr(T value); // NOLINT(google-explicit-constructor): literals read naturally in bodies

    bool defined() const { return m_node != nullptr; }
    const ExprNode &node() const { return *m_node; }

    ExprKind kind() const;
    DType dtype() const;
    std::int64_t intValue() const;          ///< IntConst
    double floatValue() const;              ///< FloatConst
    const std::string &name() const;        ///< IterVar, SizeVar
    const TensorRef &tensor() const;        ///< Read
    UnaryOp unaryOp() const;                ///< Unary
    BinaryOp binaryOp() const;              ///< Binary
    /// Read: the indices; Unary, Cast: one; Binary: two; Select: condition, then, else.
    const std::vector<Expr> &operands() const;
    const Expr &operand(std::size_t index) const;

    bool isConst() const;
    /// True for an IntConst equal to value (so isIntConst(0) recognises a zero lower bound).
    bool isIntConst(std::int64_t value) const;

    /// Structural equality: same kinds, types, values, names, tensors and operands.
    bool equals(const Expr &other) const;
    /// Identity: both handles share one node.
    bool sameAs(const Expr &other) const { return m_node == other.m_node; }

    /// Tensor-expression text, e.g. "A[i, k] * B[k, j]", with only the parentheses it needs.
    std::string toString() const;

private:
    explicit Expr(std::shared_ptr<const ExprNode> node) : m_node(std::move(node)) {}
    friend struct ExprAccess;

    std::shared_ptr<const ExprNode> m_node;
};

/// The data of one node. Build nodes with the factory functions below, which infer dtype.
struct ExprNode {
    ExprKind kind = ExprKind::IntConst;
    DType dtype = DType::I32;
    std::int64_t intValue = 0;
    double floatValue = 0.0;
    std::string name;
    TensorRef tensor;
    UnaryOp unaryOp = UnaryOp::Neg;
    BinaryOp binaryOp = BinaryOp::Add;
    std::vector<Expr> operands;
};

std::ostream &operator<<(std::ostream &os, const Expr &expr);

Expr intConst(std::int64_t value, DType type = DType::I32);
Expr floatConst(double value, DType type = DType::F32);
Expr boolConst(bool value);
/// An iteration variable (int32); it means something only inside a ComputeOp that declares it.
Expr var(std::string name);
/// A symbolic size (int32), bound to a number when the graph runs.
Expr sizeVar(std::string name);
Expr read(TensorRef tensor, std::vector<Expr> indices);
Expr unary(UnaryOp op, Expr operand);
Expr binary(BinaryOp op, Expr lhs, Expr rhs);
Expr select(Expr condition, Expr thenValue, Expr elseValue);
Expr cast(DType type, Expr operand);

/// A constant for a literal next to `like`: it takes like's type when the kinds agree
/// (0.5 next to a float64 is float64), so literals never widen an expression by themselves.
Expr intLiteralFor(const Expr &like, std::int64_t value);
Expr floatLiteralFor(const Expr &like, double value);

template <Number T>
Expr literalFor(const Expr &like, T value)
{
    if constexpr (std::is_floating_point_v<T>)
        return floatLiteralFor(like, static_cast<double>(value));
    else
        return intLiteralFor(like, static_cast<std::int64_t>(value));
}

template <Number T>
Expr::Expr(T value)
{
    if constexpr (std::is_floating_point_v<T>)
        *this = floatConst(static_cast<double>(value));
    else
        *this = intConst(static_cast<std::int64_t>(value), sizeof(T) > 4 ? DType::I64 : DType::I32);
}

Expr neg(Expr a);
Expr abs(Expr a);
Expr exp(Expr a);
Expr log(Expr a);
Expr sqrt(Expr a);
Expr rsqrt(Expr a);
Expr tanh(Expr a);
Expr sigmoid(Expr a);
Expr erf(Expr a);
Expr relu(Expr a);
Expr floor(Expr a);
Expr ceil(Expr a);
Expr sin(Expr a);
Expr cos(Expr a);
Expr logicalNot(Expr a);

Expr min(Expr a, Expr b);
Expr max(Expr a, Expr b);
Expr pow(Expr a, Expr b);
Expr floorDiv(Expr a, Expr b);
Expr mod(Expr a, Expr b);
Expr eq(Expr a, Expr b);
Expr ne(Expr a, Expr b);
Expr lt(Expr a, Expr b);
Expr le(Expr a, Expr b);
Expr gt(Expr a, Expr b);
Expr ge(Expr a, Expr b);
Expr logicalAnd(Expr a, Expr b);
Expr logicalOr(Expr a, Expr b);

Expr operator-(const Expr &a);
Expr operator+(const Expr &a, const Expr &b);
Expr operator-(const Expr &a, const Expr &b);
Expr operator*(const Expr &a, const Expr &b);
Expr operator/(const Expr &a, const Expr &b);
Expr operator%(const Expr &a, const Expr &b);
// == and != are deliberately not overloaded: Expr equality means equals(), use eq()/ne() to build.
Expr operator<(const Expr &a, const Expr &b);
Expr operator<=(const Expr &a, const Expr &b);
Expr operator>(const Expr &a, const Expr &b);
Expr operator>=(const Expr &a, const Expr &b);

// Mixed Expr/number forms; the number adopts the Expr's type (see literalFor).
#define STITCH_IR_MIXED_BINARY(OP)                                                                 \
    template <Number T>                                                                            \
    Expr OP(const Expr &a, T b) { return OP(a, literalFor(a, b)); }                                \
    template <Number T>                                                                            \
    Expr OP(T a, const Expr &b) { return OP(literalFor(b, a), b); }
STITCH_IR_MIXED_BINARY(operator+)
STITCH_IR_MIXED_BINARY(operator-)
STITCH_IR_MIXED_BINARY(operator*)
STITCH_IR_MIXED_BINARY(operator/)
STITCH_IR_MIXED_BINARY(operator%)
STITCH_IR_MIXED_BINARY(operator<)
STITCH_IR_MIXED_BINARY(operator<=)
STITCH_IR_MIXED_BINARY(operator>)
STITCH_IR_MIXED_BINARY(operator>=)
STITCH_IR_MIXED_BINARY(min)
STITCH_IR_MIXED_BINARY(max)
STITCH_IR_MIXED_BINARY(pow)
#undef STITCH_IR_MIXED_BINARY

} // namespace stitch::ir
