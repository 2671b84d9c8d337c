#pragma once
// Symbolic execution of one kernel launch for an arbitrary thread (phase 1 of the CUDA lifter).
//   LaunchBinding + kernel AST -> KernelExec::run -> KernelEffects (stores, pending reductions)
// Values are ir::Expr over thread variables (%bx, %tx, ...), loop variables and sizes. Branches
// become selects, loops that fold into a variable become pending reductions, loops that store
// different elements become map loops. Anything else throws LiftRefusal at the construct.

#include "core/frontend/CudaSourceIndex.h"
#include "core/frontend/cudalift/IndexMath.h"
#include "core/frontend/cudalift/KernelModel.h"
#include "core/frontend/cudalift/LiftRefusal.h"
#include "core/frontend/cudalift/Preprocessor.h"
#include "core/frontend/cudalift/SyntaxTree.h"
#include "core/frontend/cudalift/Templates.h"

#include <map>
#include <string>
#include <vector>

namespace stitch::frontend::cudalift {

/// What kernel evaluation needs from the whole program.
struct ProgramContext {
    const SyntaxTree *file = nullptr;
    const Preprocessor *macros = nullptr;
    SizeTable *sizes = nullptr;
    std::map<std::string, TSNode> functions;      ///< every function definition by name
    std::map<std::string, KernelInfo> kernels;    ///< __global__ / __device__ signatures
    const std::vector<BufferInfo> *buffers = nullptr;
    std::map<std::string, int> globals;           ///< file-scope device variables -> buffer
    const TemplateInstances *templates = nullptr; ///< calls of templates -> their instances (Templates.h)
};

/// The C type of a declaration or parameter, from its text ("const float *__restrict__" -> F32).
/// Names declared with typedef, `using X = ...;` or an object-like #define, resolved through
/// TypeAliasScope while it lives.
std::optional<ir::DType> scalarTypeFromText(std::string_view text);

/// The file's type aliases ("real_t" -> "float") for scalarTypeFromText on this thread, for the
/// lifetime of the scope (one lift).
class TypeAliasScope {
public:
    explicit TypeAliasScope(std::map<std::string, std::string> aliases);
    ~TypeAliasScope();
    TypeAliasScope(const TypeAliasScope &) = delete;
    TypeAliasScope &operator=(const TypeAliasScope &) = delete;

private:
    std::map<std::string, std::string> m_aliases;
    const std::map<std::string, std::string> *m_previous;
};

/// Symbolic evaluator of one kernel launch; one instance per launch.
class KernelExec {
public:
    KernelExec(ProgramContext &program, const LaunchBinding &launch, TSNode definition);

    /// Runs the kernel body for a symbolic thread. Throws LiftRefusal.
    KernelEffects run();

    /// Record-only evaluation, for the rubric's access model of a kernel refused for the graph:
    /// shared-memory reads are opaque values rather than resolved to what the tile holds, so tile
    /// layouts the graph cannot express (padding, transposed reads) still give their addresses.
    void setRecordOnly(bool on) { m_recordOnly = on; }

    IndexMath &math() { return m_math; }

private:
    enum class LocalKind { Scalar, Pointer, Shared };
    struct Local {
        LocalKind kind = LocalKind::Scalar;
        ir::Expr value;                   ///< Scalar; undefined until assigned
        ir::DType type = ir::DType::I32;
        bool isConst = false;
        PointerValue pointer;
        int shared = -1;
        bool globalScalar = false;        ///< a `__constant__ float x;`: reads mean x[0]
        std::string name;
    };
    /// A buffer element this thread has written: it reads back what was written.
    struct Cell {
        int buffer = -1;
        ir::Expr index;
        ir::Expr value;
        std::vector<ir::Expr> guard;      ///< where it has been written
        ir::SourceSpan span;
        std::string parameter;
    };
    struct SharedArray {
        std::string name;
        ir::DType dtype = ir::DType::F32;
        std::vector<ir::Expr> dims;
    };
    struct SharedStore {
        int array = -1;
        std::vector<ir::Expr> index;
        ir::Expr value;
        std::vector<ir::Expr> guard;
        int phase = 0;
        SourceLocation where;
    };
    struct State {
        std::vector<std::map<std::string, Local>> scopes;
        std::map<std::string, Cell> cells;
        std::map<std::string, SharedStore> shared;
        std::map<int, SourceLocation> sharedWrittenInLoop; ///< arrays a loop stored to, and where
        std::vector<ir::Expr> conditions;
        int phase = 0;
        int lastSharedReadPhase = -1;
    };
    enum class Flow { Normal, Exit };
    struct ExitSink {
        std::vector<State> states;
    };

    // KernelExec.cpp: state, cells, merging
    [[noreturn]] void refuse(TSNode where, const std::string &why, const std::string &advice = {}) const;
    SourceLocation where(TSNode node) const;
    std::string textOf(TSNode node) const;
    Local *lookup(State &s, const std::string &name);
    void declare(State &s, Local local);
    /// Records a shared-memory access for the rubric (KernelEffects::accesses).
    void recordShared(int array, const std::vector<ir::Expr> &index, bool store, const State &s, TSNode site);
    ir::Expr readBuffer(const PointerValue &p, const ir::Expr &index, State &s, TSNode site);
    void writeBuffer(const PointerValue &p, const ir::Expr &index, ir::Expr value, State &s, TSNode site,
                     const std::string &parameter);
    ir::Expr readCell(const Cell &cell, const State &s) const;
    std::string cellKey(int buffer, const ir::Expr &index) const;
    std::vector<ir::Expr> unionGuard(const std::vector<ir::Expr> &a, const std::vector<ir::Expr> &b) const;
    State merge(const State &base, std::vector<State> branches, TSNode site);
    ir::Expr relativeCondition(const State &base, const State &branch) const;
    void checkIndex(const ir::Expr &index, TSNode site, const char *what) const;
    ir::Expr placeholder(const std::string &name, ir::DType type);
    ir::Expr pendingRead(const PendingReduction &p) const;

    // KernelExpressions.cpp
    ir::Expr eval(TSNode e, State &s);
    ir::Expr evalCondition(TSNode e, State &s);
    ir::Expr evalIdentifier(TSNode e, State &s);
    ir::Expr evalField(TSNode e, State &s);
    ir::Expr evalBinary(TSNode e, State &s);
    ir::Expr evalCall(TSNode e, State &s);
    ir::Expr evalSubscript(TSNode e, State &s);
    ir::Expr evalNamedConstant(const NamedConstant &c, TSNode site, State &s);
    ir::Expr callFunction(const std::string &name, TSNode call, State &s);
    std::optional<ir::Expr> evalMathCall(const std::string &name, const std::vector<ir::Expr> &args, TSNode call);
    PointerValue evalPointer(TSNode e, State &s);
    bool isPointerExpression(TSNode e, State &s);
    ir::Expr readShared(int array, const std::vector<ir::Expr> &index, State &s, TSNode site);
    /// Unwraps a[i][j] into the base and its index list.
    TSNode subscriptBase(TSNode e, std::vector<TSNode> &indices) const;

    // KernelStatements.cpp
    Flow exec(TSNode stmt, State &s);
    Flow execBlock(TSNode block, State &s, bool newScope);
    void execDeclaration(TSNode decl, State &s);
    void execExpression(TSNode expr, State &s, TSNode stmt);
    void assign(TSNode target, const std::string &op, TSNode valueNode, State &s, TSNode stmt);
    Flow execIf(TSNode stmt, State &s);
    Flow exitWith(ExitSink *sink, State &s, TSNode stmt, const char *what);
    void syncThreads(State &s, TSNode site);

    // KernelLoops.cpp
    Flow execFor(TSNode stmt, State &s);

    ProgramContext &m_program;
    const LaunchBinding &m_launch;
    TSNode m_definition;
    const SyntaxTree *m_tree = nullptr;      ///< the tree of the node being evaluated (file or macro)
    std::optional<SourceLocation> m_site;    ///< macro expansion site, for locations
    IndexMath m_math;
    KernelEffects m_effects;
    std::vector<SharedArray> m_sharedArrays;
    std::vector<std::string> m_callStack;
    std::string m_inlineContext;              ///< call sites of inlined functions, for unique names
    int m_macroDepth = 0;
    int m_evalDepth = 0;
    int m_loopDepth = 0;
    int m_placeholders = 0;
    bool m_recordOnly = false;
    ExitSink *m_returnSink = nullptr;
    ExitSink *m_continueSink = nullptr;
    std::vector<StoreEffect> *m_storeSink = nullptr;
};

} // namespace stitch::frontend::cudalift
