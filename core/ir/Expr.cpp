#include "core/ir/Expr.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <ostream>
#include <utility>

namespace stitch::ir {

struct ExprAccess {
    static Expr make(ExprNode node) { return Expr(std::make_shared<const ExprNode>(std::move(node))); }
};

const char *unaryOpName(UnaryOp op)
{
    switch (op) {
    case UnaryOp::Neg: return "neg";
    case UnaryOp::Abs: return "abs";
    case UnaryOp::Exp: return "exp";
    case UnaryOp::Log: return "log";
    case UnaryOp::Sqrt: return "sqrt";
    case UnaryOp::Rsqrt: return "rsqrt";
    case UnaryOp::Tanh: return "tanh";
    case UnaryOp::Sigmoid: return "sigmoid";
    case UnaryOp::Erf: return "erf";
    case UnaryOp::Relu: return "relu";
    case UnaryOp::Floor: return "floor";
    case UnaryOp::Ceil: return "ceil";
    case UnaryOp::Sin: return "sin";
    case UnaryOp::Cos: return "cos";
    case UnaryOp::Not: return "not";
    }
    return "unknown";
}

const char *binaryOpName(BinaryOp op)
{
    switch (op) {
    case BinaryOp::Add: return "add";
    case BinaryOp::Sub: return "sub";
    case BinaryOp::Mul: return "mul";
    case BinaryOp::Div: return "div";
    case BinaryOp::Mod: return "mod";
    case BinaryOp::FloorDiv: return "floordiv";
    case BinaryOp::Min: return "min";
    case BinaryOp::Max: return "max";
    case BinaryOp::Pow: return "pow";
    case BinaryOp::Lt: return "lt";
    case BinaryOp::Le: return "le";
    case BinaryOp::Gt: return "gt";
    case BinaryOp::Ge: return "ge";
    case BinaryOp::Eq: return "eq";
    case BinaryOp::Ne: return "ne";
    case BinaryOp::And: return "and";
    case BinaryOp::Or: return "or";
    }
    return "unknown";
}

bool isComparison(BinaryOp op)
{
    switch (op) {
    case BinaryOp::Lt:
    case BinaryOp::Le:
    case BinaryOp::Gt:
    case BinaryOp::Ge:
    case BinaryOp::Eq:
    case BinaryOp::Ne:
        return true;
    default:
        return false;
    }
}

ExprKind Expr::kind() const { return m_node->kind; }
DType Expr::dtype() const { return m_node->dtype; }
std::int64_t Expr::intValue() const { return m_node->intValue; }
double Expr::floatValue() const { return m_node->floatValue; }
const std::string &Expr::name() const { return m_node->name; }
const TensorRef &Expr::tensor() const { return m_node->tensor; }
UnaryOp Expr::unaryOp() const { return m_node->unaryOp; }
BinaryOp Expr::binaryOp() const { return m_node->binaryOp; }
const std::vector<Expr> &Expr::operands() const { return m_node->operands; }
const Expr &Expr::operand(std::size_t index) const { return m_node->operands.at(index); }

bool Expr::isConst() const
{
    return defined() && (kind() == ExprKind::IntConst || kind() == ExprKind::FloatConst);
}

bool Expr::isIntConst(std::int64_t value) const
{
    return defined() && kind() == ExprKind::IntConst && intValue() == value;
}

bool Expr::equals(const Expr &other) const
{
    if (m_node == other.m_node)
        return true;
    if (!defined() || !other.defined())
        return false;
    const ExprNode &a = *m_node;
    const ExprNode &b = *other.m_node;
    if (a.kind != b.kind || a.dtype != b.dtype || a.operands.size() != b.operands.size())
        return false;
    switch (a.kind) {
    case ExprKind::IntConst:
        if (a.intValue != b.intValue)
            return false;
        break;
    case ExprKind::FloatConst:
        if (!(a.floatValue == b.floatValue || (std::isnan(a.floatValue) && std::isnan(b.floatValue))))
            return false;
        break;
    case ExprKind::IterVar:
    case ExprKind::SizeVar:
        if (a.name != b.name)
            return false;
        break;
    case ExprKind::Read:
        if (!(a.tensor == b.tensor))
            return false;
        break;
    case ExprKind::Unary:
        if (a.unaryOp != b.unaryOp)
            return false;
        break;
    case ExprKind::Binary:
        if (a.binaryOp != b.binaryOp)
            return false;
        break;
    case ExprKind::Select:
    case ExprKind::Cast:
        break;
    }
    for (std::size_t i = 0; i < a.operands.size(); ++i) {
        if (!a.operands[i].equals(b.operands[i]))
            return false;
    }
    return true;
}

namespace {

DType typeOf(const Expr &e)
{
    // Undefined operands are reported by Graph::validate; typing must not crash before that.
    return e.defined() ? e.dtype() : DType::F32;
}

DType unaryResultType(UnaryOp op, DType operand)
{
    switch (op) {
    case UnaryOp::Not:
        return DType::Bool;
    case UnaryOp::Neg:
    case UnaryOp::Abs:
    case UnaryOp::Relu:
    case UnaryOp::Floor:
    case UnaryOp::Ceil:
        return operand == DType::Bool ? DType::I32 : operand;
    default:
        // Transcendental functions of an integer are computed in float, as CUDA's float overloads.
        return isFloat(operand) ? operand : DType::F32;
    }
}

DType binaryResultType(BinaryOp op, DType lhs, DType rhs)
{
    if (isComparison(op) || op == BinaryOp::And || op == BinaryOp::Or)
        return DType::Bool;
    DType type = promoteTypes(lhs, rhs);
    if (op == BinaryOp::Pow && !isFloat(type))
        return DType::F32;
    return type == DType::Bool ? DType::I32 : type;
}

} // namespace

Expr intConst(std::int64_t value, DType type)
{
    ExprNode node;
    node.kind = ExprKind::IntConst;
    node.dtype = type;
    node.intValue = type == DType::Bool ? (value != 0) : value;
    return ExprAccess::make(std::move(node));
}

Expr floatConst(double value, DType type)
{
    ExprNode node;
    node.kind = ExprKind::FloatConst;
    node.dtype = type;
    node.floatValue = value;
    return ExprAccess::make(std::move(node));
}

Expr boolConst(bool value)
{
    return intConst(value ? 1 : 0, DType::Bool);
}

Expr var(std::string name)
{
    ExprNode node;
    node.kind = ExprKind::IterVar;
    node.dtype = DType::I32;
    node.name = std::move(name);
    return ExprAccess::make(std::move(node));
}

Expr sizeVar(std::string name)
{
    ExprNode node;
    node.kind = ExprKind::SizeVar;
    node.dtype = DType::I32;
    node.name = std::move(name);
    return ExprAccess::make(std::move(node));
}

Expr read(TensorRef tensor, std::vector<Expr> indices)
{
    ExprNode node;
    node.kind = ExprKind::Read;
    node.dtype = tensor.dtype;
    node.tensor = std::move(tensor);
    node.operands = std::move(indices);
    return ExprAccess::make(std::move(node));
}

Expr unary(UnaryOp op, Expr operand)
{
    ExprNode node;
    node.kind = ExprKind::Unary;
    node.unaryOp = op;
    node.dtype = unaryResultType(op, typeOf(operand));
    node.operands.push_back(std::move(operand));
    return ExprAccess::make(std::move(node));
}

Expr binary(BinaryOp op, Expr lhs, Expr rhs)
{
    ExprNode node;
    node.kind = ExprKind::Binary;
    node.binaryOp = op;
    node.dtype = binaryResultType(op, typeOf(lhs), typeOf(rhs));
    node.operands.push_back(std::move(lhs));
    node.operands.push_back(std::move(rhs));
    return ExprAccess::make(std::move(node));
}

Expr select(Expr condition, Expr thenValue, Expr elseValue)
{
    ExprNode node;
    node.kind = ExprKind::Select;
    node.dtype = promoteTypes(typeOf(thenValue), typeOf(elseValue));
    node.operands.push_back(std::move(condition));
    node.operands.push_back(std::move(thenValue));
    node.operands.push_back(std::move(elseValue));
    return ExprAccess::make(std::move(node));
}

Expr cast(DType type, Expr operand)
{
    ExprNode node;
    node.kind = ExprKind::Cast;
    node.dtype = type;
    node.operands.push_back(std::move(operand));
    return ExprAccess::make(std::move(node));
}

Expr intLiteralFor(const Expr &like, std::int64_t value)
{
    const DType type = like.defined() && isInteger(like.dtype()) ? like.dtype() : DType::I32;
    return intConst(value, type);
}

Expr floatLiteralFor(const Expr &like, double value)
{
    const DType type = like.defined() && isFloat(like.dtype()) ? like.dtype() : DType::F32;
    return floatConst(value, type);
}

Expr neg(Expr a) { return unary(UnaryOp::Neg, std::move(a)); }
Expr abs(Expr a) { return unary(UnaryOp::Abs, std::move(a)); }
Expr exp(Expr a) { return unary(UnaryOp::Exp, std::move(a)); }
Expr log(Expr a) { return unary(UnaryOp::Log, std::move(a)); }
Expr sqrt(Expr a) { return unary(UnaryOp::Sqrt, std::move(a)); }
Expr rsqrt(Expr a) { return unary(UnaryOp::Rsqrt, std::move(a)); }
Expr tanh(Expr a) { return unary(UnaryOp::Tanh, std::move(a)); }
Expr sigmoid(Expr a) { return unary(UnaryOp::Sigmoid, std::move(a)); }
Expr erf(Expr a) { return unary(UnaryOp::Erf, std::move(a)); }
Expr relu(Expr a) { return unary(UnaryOp::Relu, std::move(a)); }
Expr floor(Expr a) { return unary(UnaryOp::Floor, std::move(a)); }
Expr ceil(Expr a) { return unary(UnaryOp::Ceil, std::move(a)); }
Expr sin(Expr a) { return unary(UnaryOp::Sin, std::move(a)); }
Expr cos(Expr a) { return unary(UnaryOp::Cos, std::move(a)); }
Expr logicalNot(Expr a) { return unary(UnaryOp::Not, std::move(a)); }

Expr min(Expr a, Expr b) { return binary(BinaryOp::Min, std::move(a), std::move(b)); }
Expr max(Expr a, Expr b) { return binary(BinaryOp::Max, std::move(a), std::move(b)); }
Expr pow(Expr a, Expr b) { return binary(BinaryOp::Pow, std::move(a), std::move(b)); }
Expr floorDiv(Expr a, Expr b) { return binary(BinaryOp::FloorDiv, std::move(a), std::move(b)); }
Expr mod(Expr a, Expr b) { return binary(BinaryOp::Mod, std::move(a), std::move(b)); }
Expr eq(Expr a, Expr b) { return binary(BinaryOp::Eq, std::move(a), std::move(b)); }
Expr ne(Expr a, Expr b) { return binary(BinaryOp::Ne, std::move(a), std::move(b)); }
Expr lt(Expr a, Expr b) { return binary(BinaryOp::Lt, std::move(a), std::move(b)); }
Expr le(Expr a, Expr b) { return binary(BinaryOp::Le, std::move(a), std::move(b)); }
Expr gt(Expr a, Expr b) { return binary(BinaryOp::Gt, std::move(a), std::move(b)); }
Expr ge(Expr a, Expr b) { return binary(BinaryOp::Ge, std::move(a), std::move(b)); }
Expr logicalAnd(Expr a, Expr b) { return binary(BinaryOp::And, std::move(a), std::move(b)); }
Expr logicalOr(Expr a, Expr b) { return binary(BinaryOp::Or, std::move(a), std::move(b)); }

Expr operator-(const Expr &a) { return neg(a); }
Expr operator+(const Expr &a, const Expr &b) { return binary(BinaryOp::Add, a, b); }
Expr operator-(const Expr &a, const Expr &b) { return binary(BinaryOp::Sub, a, b); }
Expr operator*(const Expr &a, const Expr &b) { return binary(BinaryOp::Mul, a, b); }
Expr operator/(const Expr &a, const Expr &b) { return binary(BinaryOp::Div, a, b); }
Expr operator%(const Expr &a, const Expr &b) { return binary(BinaryOp::Mod, a, b); }
Expr operator<(const Expr &a, const Expr &b) { return binary(BinaryOp::Lt, a, b); }
Expr operator<=(const Expr &a, const Expr &b) { return binary(BinaryOp::Le, a, b); }
Expr operator>(const Expr &a, const Expr &b) { return binary(BinaryOp::Gt, a, b); }
Expr operator>=(const Expr &a, const Expr &b) { return binary(BinaryOp::Ge, a, b); }

namespace {

// C-like binding strength; higher binds tighter. Function-call forms are atoms.
constexpr int kPrecAtom = 100;
constexpr int kPrecUnary = 90;

int infixPrecedence(BinaryOp op)
{
    switch (op) {
    case BinaryOp::Mul:
    case BinaryOp::Div:
    case BinaryOp::Mod:
    case BinaryOp::FloorDiv:
        return 60;
    case BinaryOp::Add:
    case BinaryOp::Sub:
        return 50;
    case BinaryOp::Lt:
    case BinaryOp::Le:
    case BinaryOp::Gt:
    case BinaryOp::Ge:
        return 40;
    case BinaryOp::Eq:
    case BinaryOp::Ne:
        return 30;
    case BinaryOp::And:
        return 20;
    case BinaryOp::Or:
        return 10;
    default:
        return kPrecAtom; // min, max, pow print as calls
    }
}

const char *infixSymbol(BinaryOp op)
{
    switch (op) {
    case BinaryOp::Add: return "+";
    case BinaryOp::Sub: return "-";
    case BinaryOp::Mul: return "*";
    case BinaryOp::Div: return "/";
    case BinaryOp::Mod: return "%";
    case BinaryOp::FloorDiv: return "//";
    case BinaryOp::Lt: return "<";
    case BinaryOp::Le: return "<=";
    case BinaryOp::Gt: return ">";
    case BinaryOp::Ge: return ">=";
    case BinaryOp::Eq: return "==";
    case BinaryOp::Ne: return "!=";
    case BinaryOp::And: return "&&";
    case BinaryOp::Or: return "||";
    default: return nullptr;
    }
}

std::string formatFloat(double value)
{
    if (std::isnan(value))
        return "nan";
    if (std::isinf(value))
        return value < 0 ? "-inf" : "inf";
    char buffer[64];
    auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value);
    std::string text(buffer, ec == std::errc() ? end : buffer);
    // Keep float constants recognisable as floats: 1 would read as an integer.
    if (text.find_first_of(".en") == std::string::npos)
        text += ".0";
    return text;
}

int precedenceOf(const Expr &e)
{
    if (!e.defined())
        return kPrecAtom;
    switch (e.kind()) {
    case ExprKind::Binary:
        return infixPrecedence(e.binaryOp());
    case ExprKind::Unary:
        return e.unaryOp() == UnaryOp::Neg || e.unaryOp() == UnaryOp::Not ? kPrecUnary : kPrecAtom;
    case ExprKind::IntConst:
        return e.intValue() < 0 ? kPrecUnary : kPrecAtom;
    case ExprKind::FloatConst:
        return e.floatValue() < 0 ? kPrecUnary : kPrecAtom;
    default:
        return kPrecAtom;
    }
}

// The precedence an operand must exceed to print without parentheses under parent.
int clarifiedPrecedence(BinaryOp parent, const Expr &operand, int required)
{
    if (!operand.defined() || operand.kind() != ExprKind::Binary)
        return required;
    const BinaryOp child = operand.binaryOp();
    if ((isComparison(parent) && isComparison(child)) || (parent == BinaryOp::Or && child == BinaryOp::And))
        return kPrecAtom;
    return required;
}

void print(const Expr &e, std::string &out);

void printOperand(const Expr &e, int minPrecedence, std::string &out)
{
    const bool parens = precedenceOf(e) < minPrecedence;
    if (parens)
        out += '(';
    print(e, out);
    if (parens)
        out += ')';
}

void printList(const std::vector<Expr> &list, std::string &out)
{
    for (std::size_t i = 0; i < list.size(); ++i) {
        if (i > 0)
            out += ", ";
        print(list[i], out);
    }
}

void print(const Expr &e, std::string &out)
{
    if (!e.defined()) {
        out += "<undefined>";
        return;
    }
    switch (e.kind()) {
    case ExprKind::IntConst:
        if (e.dtype() == DType::Bool)
            out += e.intValue() != 0 ? "true" : "false";
        else
            out += std::to_string(e.intValue());
        return;
    case ExprKind::FloatConst:
        out += formatFloat(e.floatValue());
        return;
    case ExprKind::IterVar:
    case ExprKind::SizeVar:
        out += e.name();
        return;
    case ExprKind::Read:
        out += e.tensor().name;
        out += '[';
        printList(e.operands(), out);
        out += ']';
        return;
    case ExprKind::Unary:
        if (e.unaryOp() == UnaryOp::Neg || e.unaryOp() == UnaryOp::Not) {
            out += e.unaryOp() == UnaryOp::Neg ? "-" : "!";
            // Parenthesise a negative operand too, so "- -1" never prints as "--1".
            printOperand(e.operand(0), kPrecAtom, out);
        } else {
            out += unaryOpName(e.unaryOp());
            out += '(';
            print(e.operand(0), out);
            out += ')';
        }
        return;
    case ExprKind::Binary: {
        const int prec = infixPrecedence(e.binaryOp());
        if (prec == kPrecAtom) {
            out += binaryOpName(e.binaryOp());
            out += '(';
            printList(e.operands(), out);
            out += ')';
            return;
        }
        // Left-associative: the right operand needs parentheses at equal precedence, which
        // keeps the printed text faithful to the tree (a - (b - c), a + (b + c)). Mixes that C
        // compilers warn about ((a < b) == c, a || (b && c)) get parentheses too.
        printOperand(e.operand(0), clarifiedPrecedence(e.binaryOp(), e.operand(0), prec), out);
        out += ' ';
        out += infixSymbol(e.binaryOp());
        out += ' ';
        printOperand(e.operand(1), clarifiedPrecedence(e.binaryOp(), e.operand(1), prec + 1), out);
        return;
    }
    case ExprKind::Select:
        out += "select(";
        printList(e.operands(), out);
        out += ')';
        return;
    case ExprKind::Cast:
        out += dtypeName(e.dtype());
        out += '(';
        print(e.operand(0), out);
        out += ')';
        return;
    }
}

} // namespace

std::string Expr::toString() const
{
    std::string out;
    print(*this, out);
    return out;
}

std::ostream &operator<<(std::ostream &os, const Expr &expr)
{
    return os << expr.toString();
}

} // namespace stitch::ir
