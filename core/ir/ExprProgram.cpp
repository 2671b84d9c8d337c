#include "core/ir/ExprProgram.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace stitch::ir {

namespace {

// Beyond this magnitude a double index is certainly out of bounds and unsafe to convert.
constexpr double kIndexLimit = 4611686018427387904.0; // 2^62

std::string formatNumber(double value)
{
    if (std::trunc(value) == value && std::fabs(value) < kIndexLimit)
        return std::to_string(static_cast<std::int64_t>(value));
    return std::to_string(value);
}

double applyUnary(UnaryOp op, double x)
{
    switch (op) {
    case UnaryOp::Neg: return -x;
    case UnaryOp::Abs: return std::fabs(x);
    case UnaryOp::Exp: return std::exp(x);
    case UnaryOp::Log: return std::log(x);
    case UnaryOp::Sqrt: return std::sqrt(x);
    case UnaryOp::Rsqrt: return 1.0 / std::sqrt(x);
    case UnaryOp::Tanh: return std::tanh(x);
    case UnaryOp::Sigmoid: return 1.0 / (1.0 + std::exp(-x));
    case UnaryOp::Erf: return std::erf(x);
    case UnaryOp::Relu: return x > 0.0 ? x : 0.0;
    case UnaryOp::Floor: return std::floor(x);
    case UnaryOp::Ceil: return std::ceil(x);
    case UnaryOp::Sin: return std::sin(x);
    case UnaryOp::Cos: return std::cos(x);
    case UnaryOp::Not: return x == 0.0 ? 1.0 : 0.0;
    }
    return x;
}

} // namespace

bool convertToType(DType type, double &value)
{
    switch (type) {
    case DType::Bool:
        value = value != 0.0 ? 1.0 : 0.0;
        return true;
    case DType::I32:
    case DType::I64: {
        const double t = std::trunc(value);
        const double lo = type == DType::I32 ? -2147483648.0 : -9223372036854775808.0;
        const double hi = type == DType::I32 ? 2147483648.0 : 9223372036854775808.0;
        if (!(t >= lo && t < hi)) // also rejects NaN
            return false;
        value = t;
        return true;
    }
    default:
        return true;
    }
}

class ExprProgram::Compiler {
public:
    Compiler(ExprProgram &program, const std::vector<std::string> &slotNames, const SizeBindings &sizes,
             const std::map<TensorId, BufferView> &buffers)
        : m_program(program), m_slotNames(slotNames), m_sizes(sizes), m_buffers(buffers)
    {
    }

    Status compile(const Expr &e)
    {
        if (!e.defined())
            return makeError(ErrorKind::InvalidArgument, "cannot compile an undefined expression");
        switch (e.kind()) {
        case ExprKind::IntConst:
            emitConst(static_cast<double>(e.intValue()));
            return Ok{};
        case ExprKind::FloatConst:
            emitConst(e.floatValue());
            return Ok{};
        case ExprKind::SizeVar: {
            auto it = m_sizes.find(e.name());
            if (it == m_sizes.end())
                return makeError(ErrorKind::InvalidArgument, "size variable '" + e.name() + "' is not bound");
            emitConst(static_cast<double>(it->second));
            return Ok{};
        }
        case ExprKind::IterVar: {
            const int slot = slotOf(e.name());
            if (slot < 0)
                return makeError(ErrorKind::InvalidArgument, "unknown iteration variable '" + e.name() + "'");
            emit(Opcode::Slot, slot, +1);
            return Ok{};
        }
        case ExprKind::Read:
            return compileRead(e);
        case ExprKind::Unary: {
            if (Status s = compile(e.operand(0)); !s)
                return s;
            emit(Opcode::Unary, static_cast<std::int32_t>(e.unaryOp()), 0);
            return Ok{};
        }
        case ExprKind::Binary:
            return compileBinary(e);
        case ExprKind::Select: {
            if (Status s = compile(e.operand(0)); !s)
                return s;
            const std::size_t toElse = emit(Opcode::JumpIfZero, 0, -1);
            const int depth = m_depth;
            if (Status s = compile(e.operand(1)); !s)
                return s;
            const std::size_t toEnd = emit(Opcode::Jump, 0, 0);
            patch(toElse);
            m_depth = depth;
            if (Status s = compile(e.operand(2)); !s)
                return s;
            patch(toEnd);
            return Ok{};
        }
        case ExprKind::Cast: {
            if (Status s = compile(e.operand(0)); !s)
                return s;
            emit(Opcode::Cast, static_cast<std::int32_t>(e.dtype()), 0);
            return Ok{};
        }
        }
        return makeError(ErrorKind::Unsupported, "unsupported expression kind");
    }

    int maxDepth() const { return m_maxDepth; }

private:
    std::size_t emit(Opcode op, std::int32_t a, int depthChange, double value = 0.0)
    {
        m_program.m_code.push_back(Instr{op, a, value});
        m_depth += depthChange;
        m_maxDepth = std::max(m_maxDepth, m_depth);
        return m_program.m_code.size() - 1;
    }

    void emitConst(double value) { emit(Opcode::Const, 0, +1, value); }

    void patch(std::size_t jump)
    {
        m_program.m_code[jump].a = static_cast<std::int32_t>(m_program.m_code.size());
    }

    int slotOf(const std::string &name) const
    {
        auto it = std::find(m_slotNames.begin(), m_slotNames.end(), name);
        return it == m_slotNames.end() ? -1 : static_cast<int>(it - m_slotNames.begin());
    }

    Status compileRead(const Expr &e)
    {
        auto it = m_buffers.find(e.tensor().id);
        if (it == m_buffers.end())
            return makeError(ErrorKind::InvalidArgument, "tensor '" + e.tensor().name + "' has no buffer");
        const BufferView &buffer = it->second;
        if (buffer.extents.size() != e.operands().size()) {
            return makeError(ErrorKind::InvalidArgument, "read " + e.toString() + " has "
                                 + std::to_string(e.operands().size()) + " indices for a tensor of rank "
                                 + std::to_string(buffer.extents.size()));
        }
        ReadSite site{buffer.name, buffer.data, buffer.extents, buffer.strides, {}};
        // Indices that are plain variables (A[i, k]) are the common case: read them straight
        // from the slots instead of pushing and popping each one.
        bool allSlots = true;
        for (const Expr &index : e.operands()) {
            const int slot = index.defined() && index.kind() == ExprKind::IterVar ? slotOf(index.name()) : -1;
            allSlots = allSlots && slot >= 0;
            site.slots.push_back(slot);
        }
        const auto siteIndex = static_cast<std::int32_t>(m_program.m_reads.size());
        const auto rank = static_cast<int>(e.operands().size());
        if (allSlots) {
            m_program.m_reads.push_back(std::move(site));
            emit(Opcode::ReadSlots, siteIndex, +1);
            return Ok{};
        }
        site.slots.clear();
        m_program.m_reads.push_back(std::move(site));
        for (const Expr &index : e.operands()) {
            if (Status s = compile(index); !s)
                return s;
        }
        emit(Opcode::Read, siteIndex, 1 - rank);
        return Ok{};
    }

    Status compileBinary(const Expr &e)
    {
        const BinaryOp op = e.binaryOp();
        if (op == BinaryOp::And || op == BinaryOp::Or) {
            // Short-circuit like C, so the right side may rely on the left (i > 0 && A[i - 1] > 0).
            if (Status s = compile(e.operand(0)); !s)
                return s;
            const std::size_t toSecond = emit(Opcode::JumpIfZero, 0, -1);
            const int depth = m_depth;
            if (op == BinaryOp::And) {
                if (Status s = compile(e.operand(1)); !s)
                    return s;
                emit(Opcode::ToBool, 0, 0);
                const std::size_t toEnd = emit(Opcode::Jump, 0, 0);
                patch(toSecond);
                m_depth = depth;
                emitConst(0.0);
                patch(toEnd);
            } else {
                emitConst(1.0);
                const std::size_t toEnd = emit(Opcode::Jump, 0, 0);
                patch(toSecond);
                m_depth = depth;
                if (Status s = compile(e.operand(1)); !s)
                    return s;
                emit(Opcode::ToBool, 0, 0);
                patch(toEnd);
            }
            return Ok{};
        }
        if (Status s = compile(e.operand(0)); !s)
            return s;
        if (Status s = compile(e.operand(1)); !s)
            return s;
        const bool integer = !isFloat(e.dtype());
        Opcode code = Opcode::Add;
        switch (op) {
        case BinaryOp::Add: code = Opcode::Add; break;
        case BinaryOp::Sub: code = Opcode::Sub; break;
        case BinaryOp::Mul: code = Opcode::Mul; break;
        case BinaryOp::Div: code = integer ? Opcode::IntDiv : Opcode::Div; break;
        case BinaryOp::Mod: code = integer ? Opcode::IntMod : Opcode::Mod; break;
        case BinaryOp::FloorDiv: code = integer ? Opcode::IntFloorDiv : Opcode::FloorDiv; break;
        case BinaryOp::Min: code = Opcode::Min; break;
        case BinaryOp::Max: code = Opcode::Max; break;
        case BinaryOp::Pow: code = Opcode::Pow; break;
        case BinaryOp::Lt: code = Opcode::Lt; break;
        case BinaryOp::Le: code = Opcode::Le; break;
        case BinaryOp::Gt: code = Opcode::Gt; break;
        case BinaryOp::Ge: code = Opcode::Ge; break;
        case BinaryOp::Eq: code = Opcode::Eq; break;
        case BinaryOp::Ne: code = Opcode::Ne; break;
        case BinaryOp::And:
        case BinaryOp::Or: break; // handled above
        }
        emit(code, 0, -1);
        return Ok{};
    }

    ExprProgram &m_program;
    const std::vector<std::string> &m_slotNames;
    const SizeBindings &m_sizes;
    const std::map<TensorId, BufferView> &m_buffers;
    int m_depth = 0;
    int m_maxDepth = 0;
};

Result<ExprProgram> ExprProgram::compile(const Expr &expr, const std::vector<std::string> &slotNames,
                                         const SizeBindings &sizes, const std::map<TensorId, BufferView> &buffers)
{
    ExprProgram program;
    Compiler compiler(program, slotNames, sizes, buffers);
    if (Status s = compiler.compile(expr); !s)
        return s.error();
    program.m_stack.resize(static_cast<std::size_t>(std::max(compiler.maxDepth(), 1)));
    return program;
}

bool ExprProgram::readFault(const ReadSite &site, const std::vector<double> &indices) const
{
    std::string text = "out-of-bounds read " + site.name + "[";
    std::string shape = "[";
    for (std::size_t d = 0; d < indices.size(); ++d) {
        text += (d > 0 ? ", " : "") + formatNumber(indices[d]);
        shape += (d > 0 ? ", " : "") + std::to_string(site.extents[d]);
    }
    m_fault = text + "] of " + site.name + shape + "]";
    return false;
}

bool ExprProgram::evaluate(const std::int64_t *slots, double &result) const
{
    double *sp = m_stack.data(); // next free entry
    const Instr *code = m_code.data();
    const std::size_t size = m_code.size();
    for (std::size_t pc = 0; pc < size; ++pc) {
        const Instr &in = code[pc];
        switch (in.op) {
        case Opcode::Const:
            *sp++ = in.value;
            break;
        case Opcode::Slot:
            *sp++ = static_cast<double>(slots[in.a]);
            break;
        case Opcode::ReadSlots: {
            const ReadSite &site = m_reads[static_cast<std::size_t>(in.a)];
            std::int64_t offset = 0;
            for (std::size_t d = 0; d < site.slots.size(); ++d) {
                const std::int64_t index = slots[site.slots[d]];
                if (index < 0 || index >= site.extents[d]) {
                    std::vector<double> indices;
                    for (std::int32_t s : site.slots)
                        indices.push_back(static_cast<double>(slots[s]));
                    return readFault(site, indices);
                }
                offset += index * site.strides[d];
            }
            *sp++ = site.data[offset];
            break;
        }
        case Opcode::Read: {
            const ReadSite &site = m_reads[static_cast<std::size_t>(in.a)];
            const std::size_t rank = site.extents.size();
            double *first = sp - rank;
            std::int64_t offset = 0;
            for (std::size_t d = 0; d < rank; ++d) {
                const double value = first[d];
                if (!(value >= 0.0 && value < static_cast<double>(site.extents[d])))
                    return readFault(site, std::vector<double>(first, sp));
                offset += static_cast<std::int64_t>(value) * site.strides[d];
            }
            sp = first;
            *sp++ = site.data[offset];
            break;
        }
        case Opcode::Add: --sp; sp[-1] += sp[0]; break;
        case Opcode::Sub: --sp; sp[-1] -= sp[0]; break;
        case Opcode::Mul: --sp; sp[-1] *= sp[0]; break;
        case Opcode::Div: --sp; sp[-1] /= sp[0]; break;
        case Opcode::Mod: --sp; sp[-1] = std::fmod(sp[-1], sp[0]); break;
        case Opcode::FloorDiv: --sp; sp[-1] = std::floor(sp[-1] / sp[0]); break;
        case Opcode::IntDiv:
        case Opcode::IntMod:
        case Opcode::IntFloorDiv: {
            --sp;
            if (sp[0] == 0.0) {
                m_fault = "integer division by zero";
                return false;
            }
            // Both operands are integral doubles; trunc of the quotient is C's integer division.
            if (in.op == Opcode::IntDiv)
                sp[-1] = std::trunc(sp[-1] / sp[0]);
            else if (in.op == Opcode::IntMod)
                sp[-1] = std::fmod(sp[-1], sp[0]);
            else
                sp[-1] = std::floor(sp[-1] / sp[0]);
            break;
        }
        case Opcode::Min: --sp; sp[-1] = std::fmin(sp[-1], sp[0]); break;
        case Opcode::Max: --sp; sp[-1] = std::fmax(sp[-1], sp[0]); break;
        case Opcode::Pow: --sp; sp[-1] = std::pow(sp[-1], sp[0]); break;
        case Opcode::Lt: --sp; sp[-1] = sp[-1] < sp[0] ? 1.0 : 0.0; break;
        case Opcode::Le: --sp; sp[-1] = sp[-1] <= sp[0] ? 1.0 : 0.0; break;
        case Opcode::Gt: --sp; sp[-1] = sp[-1] > sp[0] ? 1.0 : 0.0; break;
        case Opcode::Ge: --sp; sp[-1] = sp[-1] >= sp[0] ? 1.0 : 0.0; break;
        case Opcode::Eq: --sp; sp[-1] = sp[-1] == sp[0] ? 1.0 : 0.0; break;
        case Opcode::Ne: --sp; sp[-1] = sp[-1] != sp[0] ? 1.0 : 0.0; break;
        case Opcode::Unary:
            sp[-1] = applyUnary(static_cast<UnaryOp>(in.a), sp[-1]);
            break;
        case Opcode::Cast:
            if (!convertToType(static_cast<DType>(in.a), sp[-1])) {
                m_fault = "cannot convert " + formatNumber(sp[-1]) + " to "
                    + dtypeName(static_cast<DType>(in.a));
                return false;
            }
            break;
        case Opcode::ToBool:
            sp[-1] = sp[-1] != 0.0 ? 1.0 : 0.0;
            break;
        case Opcode::Jump:
            pc = static_cast<std::size_t>(in.a) - 1; // the loop's ++pc lands on the target
            break;
        case Opcode::JumpIfZero:
            if (*--sp == 0.0)
                pc = static_cast<std::size_t>(in.a) - 1;
            break;
        }
    }
    result = m_stack[0];
    return true;
}

} // namespace stitch::ir
