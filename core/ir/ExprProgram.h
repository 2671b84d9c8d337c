#pragma once
// Expressions compiled to a flat stack program, so the interpreter does not walk shared_ptr trees.
//   Expr + variable slots + size bindings + buffers -> ExprProgram::compile -> evaluate per point
// Used by the Interpreter; values are doubles, integers are exact up to 2^53.

#include "core/common/Result.h"
#include "core/ir/Expr.h"
#include "core/ir/Shape.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace stitch::ir {

/// A tensor as compiled code reads it: row-major doubles with concrete extents.
struct BufferView {
    std::string name;
    const double *data = nullptr;
    std::vector<std::int64_t> extents;
    std::vector<std::int64_t> strides;
};

/// Converts value to what a variable of type holds: integers truncate toward zero, bool is 0/1,
/// floating types keep the double unchanged (the reference does not round to float or half).
/// Returns false when an integer conversion is impossible (NaN, infinity, out of range).
bool convertToType(DType type, double &value);

/// One expression ready to evaluate at many points. Reads are bounds-checked, integer division
/// by zero and impossible integer casts are faults, and select/and/or evaluate only the branch
/// they need, so a guarded read such as select(i > 0, A[i - 1], 0) never faults.
///
/// evaluate() uses an internal stack: one ExprProgram must not be evaluated by two threads at once.
class ExprProgram {
public:
    /// slotNames[s] is the iteration variable held in slots[s] at evaluation time. Size variables
    /// are replaced by their values from sizes; buffers holds every tensor the expression reads.
    static Result<ExprProgram> compile(const Expr &expr, const std::vector<std::string> &slotNames,
                                       const SizeBindings &sizes, const std::map<TensorId, BufferView> &buffers);

    /// Computes the value for the variable values in slots; false on a fault (see fault()).
    bool evaluate(const std::int64_t *slots, double &result) const;
    /// What went wrong in the last evaluate() that returned false.
    const std::string &fault() const { return m_fault; }

    std::size_t instructionCount() const { return m_code.size(); }

private:
    enum class Opcode : std::uint8_t {
        Const, Slot, ReadSlots, Read,
        Add, Sub, Mul, Div, IntDiv, Mod, IntMod, FloorDiv, IntFloorDiv, Min, Max, Pow,
        Lt, Le, Gt, Ge, Eq, Ne,
        Unary, Cast, ToBool, Jump, JumpIfZero,
    };
    struct Instr {
        Opcode op = Opcode::Const;
        std::int32_t a = 0; ///< slot, read site, jump target, UnaryOp or DType
        double value = 0.0; ///< Const
    };
    struct ReadSite {
        std::string name;
        const double *data = nullptr;
        std::vector<std::int64_t> extents;
        std::vector<std::int64_t> strides;
        std::vector<std::int32_t> slots; ///< ReadSlots: the slot of each index
    };
    class Compiler;

    bool readFault(const ReadSite &site, const std::vector<double> &indices) const;

    std::vector<Instr> m_code;
    std::vector<ReadSite> m_reads;
    mutable std::vector<double> m_stack;
    mutable std::string m_fault;
};

} // namespace stitch::ir
