#pragma once
// What one kernel launch does, per thread, before it becomes IR (phase 1 of the CUDA lifter).
//   host walk (HostProgram) -> LaunchBinding -> KernelExec (symbolic, per thread) -> KernelEffects
//   KernelEffects -> ThreadSpace (threads -> domains) -> Assembly (shapes, versions) -> ir::Graph
// Buffers are host allocations; reads of a buffer's previous contents are ir reads of
// TensorRef{id = buffer index} with one flat index, resolved to real tensors during assembly.

#include "core/common/Result.h"
#include "core/ir/ComputeOp.h"
#include "core/ir/Expr.h"

#include <array>
#include <map>
#include <string>
#include <vector>

namespace stitch::frontend::cudalift {

/// A device allocation made by the host program (cudaMalloc / cudaMallocManaged).
struct BufferInfo {
    std::string name;                ///< the host pointer variable, e.g. "d_A"
    ir::DType dtype = ir::DType::F32;
    std::string unmodelledType;      ///< the declared element type when no DType expresses it
    ir::Expr elements;               ///< element count, over sizes
    std::vector<ir::Expr> factors;   ///< the count as the program multiplies it: {M, K}
    SourceLocation allocation;
    bool managed = false;

    ir::TensorRef ref(int index) const { return ir::TensorRef{index, name, dtype}; }
};

/// A pointer as a kernel sees it: a buffer plus an element offset.
struct PointerValue {
    int buffer = -1;
    ir::Expr offset = ir::Expr(0);
    ir::DType dtype = ir::DType::F32;
    std::string unmodelledType;      ///< the declared element type when no DType expresses it
    bool unsignedType = false;       ///< declared unsigned: lifted as the signed type of its width
};

/// One kernel argument resolved in the host program.
struct KernelArgument {
    enum class Kind { Buffer, Scalar };
    Kind kind = Kind::Scalar;
    PointerValue pointer;
    ir::Expr scalar;   ///< integer sizes over size variables, or a float constant
    std::string text;  ///< as written
};

/// A launch with everything the kernel body needs: grid, block and arguments.
struct LaunchBinding {
    std::string kernel;
    std::array<ir::Expr, 3> grid{ir::Expr(1), ir::Expr(1), ir::Expr(1)};
    std::array<ir::Expr, 3> block{ir::Expr(1), ir::Expr(1), ir::Expr(1)};
    std::vector<KernelArgument> arguments; ///< one per kernel parameter
    SourceLocation location;
    int index = 0;                         ///< position in the launch sequence
};

/// An iteration variable a loop introduced; internal names start with '%'.
struct LoopVar {
    std::string name;
    std::string hint;  ///< the loop variable as written, for printing
    ir::Expr lo;
    ir::Expr hi;       ///< exclusive
};

/// A value a thread leaves in a buffer element when it finishes.
struct StoreEffect {
    int buffer = -1;
    ir::Expr index;                  ///< flat element index
    ir::Expr value;
    std::vector<ir::Expr> guard;     ///< all must hold for the store to happen
    std::vector<LoopVar> mapLoops;   ///< loops around the store whose iterations store different elements
    ir::SourceSpan span;
    std::string parameter;           ///< the kernel parameter written through
};

/// A loop that folds values into a running variable; read as ir reads of a pseudo tensor
/// TensorRef{id = pendingTensorId(id)} with no indices until assembly materialises it.
struct PendingReduction {
    int id = 0;
    ir::ReduceKind kind = ir::ReduceKind::Sum;
    std::vector<LoopVar> vars;
    ir::Expr init;                   ///< undefined: the identity of kind
    ir::Expr body;
    std::vector<ir::Expr> guard;     ///< conditions under which the loop ran
    ir::DType dtype = ir::DType::F32;
    std::string hint;                ///< the accumulator's name
    ir::SourceSpan span;
};

/// Pseudo tensor ids: pending reductions and accumulator placeholders never collide with buffers.
/// (Intermediates of ThreadSpace use the next range down, from kIntermediateBase.)
constexpr int kPendingBase = -1000000;
constexpr int kPlaceholderBase = -2000000;
constexpr int kIntermediateBase = -3000000;
inline int pendingTensorId(int id) { return kPendingBase - id; }
inline bool isPendingTensor(int tensorId) { return tensorId <= kPendingBase && tensorId > kPlaceholderBase; }
inline int pendingIndex(int tensorId) { return kPendingBase - tensorId; }
inline bool isPlaceholderTensor(int tensorId) { return tensorId <= kPlaceholderBase && tensorId > kIntermediateBase; }

/// Thread coordinates as the symbolic evaluator names them.
inline std::string blockVar(int dim) { return std::string("%b") + "xyz"[dim]; }
inline std::string threadVar(int dim) { return std::string("%t") + "xyz"[dim]; }

/// One memory instruction as the symbolic thread executes it, recorded for the rubric of the
/// program as written (core/rubric/AsWrittenRubric.h); the lifter itself does not read these.
struct AccessRecord {
    bool shared = false;          ///< a __shared__ array rather than a global buffer
    bool store = false;
    int target = -1;              ///< buffer index (global) or shared array index
    std::string name;             ///< the buffer (host name) or the shared array
    ir::Expr index;               ///< flat element index over %b*, %t*, loop variables and sizes
    std::vector<ir::Expr> guard;  ///< the path conditions under which it runs
    int elementBytes = 4;
    SourceLocation where;
};

/// A lane-dependent `if` as the symbolic thread met it (for the rubric's divergence).
struct BranchRecord {
    ir::Expr condition;
    std::vector<ir::Expr> guard;  ///< conditions around the `if`
    SourceLocation where;
    std::string text;             ///< the condition as written
};

/// A grid- or block-stride loop: its variable counts the elements [0, hi) for the graph; one
/// thread visits start, start + step, ...
struct StrideLoop {
    ir::Expr start;
    ir::Expr step;
};

/// Everything one launch does, per thread, in terms of thread variables and loop variables.
struct KernelEffects {
    std::vector<StoreEffect> stores;
    std::vector<PendingReduction> pending;
    std::vector<std::pair<ir::Expr, std::string>> hints; ///< int locals: value -> name, for printing
    std::map<std::string, LoopVar> loopVars;             ///< every loop variable met, by internal name
    std::vector<std::string> consumedThreadVars;         ///< thread vars replaced by a stride loop
    std::map<int, ir::Expr> strideBounds;                ///< dimension -> bound its stride loop covers
    std::vector<AccessRecord> accesses;                  ///< every load and store met, in order (may repeat)
    std::vector<BranchRecord> branches;                  ///< every `if` whose condition is not constant
    std::map<std::string, StrideLoop> strideLoops;       ///< stride loop variable -> its per-thread walk
};

} // namespace stitch::frontend::cudalift
