#pragma once
// The host walker's state and its two halves, shared by HostProgram.cpp (statements, CUDA runtime
// calls, launches) and HostExpressions.cpp (values of host expressions: sizes, dim3, pointers).
//   main's AST -> HostWalker -> HostProgram {buffers, launches, events}
// Internal to cudalift: walkHostProgram (HostProgram.h) is the interface.

#include "core/frontend/cudalift/HostProgram.h"
#include "core/frontend/cudalift/IndexMath.h"

#include <array>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace stitch::frontend::cudalift {

/// What a host variable or expression holds, as far as the lifter follows it.
struct HostValue {
    enum class Kind { Unknown, Int, Float, Pointer, Dim3 };
    Kind kind = Kind::Unknown;
    ir::Expr value;
    std::array<ir::Expr, 3> dims{ir::Expr(1), ir::Expr(1), ir::Expr(1)};
    PointerValue pointer;
    std::string why;

    static HostValue unknown(std::string reason)
    {
        HostValue v;
        v.why = std::move(reason);
        return v;
    }
    static HostValue ofInt(ir::Expr e)
    {
        HostValue v;
        v.kind = Kind::Int;
        v.value = std::move(e);
        return v;
    }
    static HostValue ofFloat(ir::Expr e)
    {
        HostValue v;
        v.kind = Kind::Float;
        v.value = std::move(e);
        return v;
    }
};

/// Follows main (or uncalled host entry points) statement by statement; see walkHostProgram.
class HostWalker {
public:
    explicit HostWalker(ProgramContext &program);
    /// Walks the program once; never throws (a statement that hits a limit becomes a note).
    HostProgram run();

private:
    using Expr = ir::Expr;
    std::vector<std::pair<std::string, HostValue>> entryParameters(TSNode fn);
    void declareDeviceGlobals();
    void note(TSNode at, std::string message);
    HostValue *lookup(const std::string &name);
    /// The scope that declares name (a local), or null.
    std::map<std::string, HostValue> *scopeOf(const std::string &name);
    /// `cfg.n`, `p->n` of a local struct: its value as assigned, or a size computed at run time
    /// (cfg_n) that the user binds; nullopt when the base is not a local.
    std::optional<HostValue> memberValue(TSNode fieldExpression);
    /// `grid.x = ...` on a dim3 local, `cfg.n = ...` on a struct local. False when not a member.
    bool assignMember(TSNode left, TSNode right, const std::string &op);
    void walkFunction(const std::string &name, TSNode fn, std::vector<std::pair<std::string, HostValue>> params);
    void walkBlock(TSNode block);
    void walkStatement(TSNode s);
    void walkExpressions(TSNode n);
    void declare(TSNode decl);
    Expr constantAsFloat(const HostValue &v, ir::DType t);
    HostValue integerLocal(const std::string &name, const HostValue &init, TSNode value, bool isConst);
    HostValue evalDim3Init(TSNode value);
    HostValue dim3Of(const std::vector<HostValue> &parts);
    HostValue evalNamed(const NamedConstant &c, const std::vector<HostValue> &args);
    static bool isSizeExpression(const Expr &e);
    HostValue evalName(const std::string &name);
    HostValue eval(TSNode e);
    HostValue evalNode(TSNode e);
    HostValue evalBinary(TSNode e);
    HostValue handleCall(TSNode call);
    void inlineCall(const std::string &name, TSNode fn, const std::vector<TSNode> &args);
    void allocate(TSNode call, const std::vector<TSNode> &args, bool managed);
    int bufferOf(TSNode arg);
    void copy(TSNode call, const std::vector<TSNode> &args);
    void setMemory(TSNode call, const std::vector<TSNode> &args);
    void noteHostReads(TSNode e);
    void walkExpression(TSNode e);
    void walkCalls(TSNode e);
    void recordLaunch(TSNode call, TSNode config);

    using Scope = std::map<std::string, HostValue>;
    ProgramContext &m_program;
    const SyntaxTree *m_tree;
    IndexMath m_math;
    HostProgram m_out;
    std::vector<Scope> m_scopes;
    Scope m_globals; ///< file-scope device variables, visible in every host function
    std::vector<std::string> m_callStack;
    int m_controlDepth = 0;
    int m_loopDepth = 0; ///< of m_controlDepth, how many are loops (the rest: if / switch branches)
    int m_macroDepth = 0;
    int m_evalDepth = 0;
};

/// A node without the casts and parentheses around it.
TSNode stripCastsAndParens(TSNode e);
/// The identifier a declarator declares (through pointer, array and init declarators).
TSNode innermostIdentifier(TSNode declarator);
/// The factors of a byte count as the program multiplies them; a named size defined as a product
/// (size_t bytes = M * K * sizeof(float)) contributes its own factors.
void flattenProduct(const ir::Expr &e, const SizeTable &sizes, std::vector<ir::Expr> &out, int depth = 0);

} // namespace stitch::frontend::cudalift
