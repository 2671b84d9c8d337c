// libFuzzer target over both frontends: the same bytes go to the .te parser, to the tree-sitter
// CUDA index and to the CUDA lifter. Anything they accept must be a valid graph that prints, turns
// into JSON and runs in the interpreter at small sizes; anything they reject must say where.
// Built twice: fuzz_frontends (both frontends) and fuzz_te (STITCH_FUZZ_TE_ONLY: the .te parser
// alone, ~20x more executions per second because tree-sitter dominates the CUDA side).
//   bytes -> liftTensorExpressions | indexCudaSource + liftCudaProgram -> validate, JSON, interpret
#include "core/frontend/CudaSourceIndex.h"
#include "core/frontend/Lift.h"
#include "core/frontend/LiftJson.h"
#include "core/ir/Interpreter.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

using namespace stitch;

[[noreturn]] void violated(const char *what, const std::string &detail)
{
    std::fprintf(stderr, "fuzz_frontends: invariant violated: %s\n%s\n", what, detail.c_str());
    std::abort();
}

/// Work of one run of the graph with every size bound to small values, or -1 when a range
/// cannot be evaluated (a reduction bound that depends on a spatial variable).
std::int64_t estimateWork(const ir::Graph &graph, const ir::SizeBindings &sizes)
{
    std::int64_t work = 0;
    for (const ir::Tensor &t : graph.tensors()) {
        auto extents = t.shape.evaluate(sizes);
        if (!extents)
            return -1;
        double n = 1; // in double: ir::elementCount overflows on huge concrete shapes
        for (std::int64_t extent : *extents)
            n *= static_cast<double>(extent);
        if (n > 100000)
            return -1;
        work += static_cast<std::int64_t>(n);
    }
    for (const ir::ComputeOp &op : graph.ops()) {
        std::int64_t points = 1;
        for (const ir::IterVar &var : op.allIterVars()) {
            auto extent = ir::evaluateSizeExpr(var.extent, sizes);
            if (!extent)
                return -1;
            points *= std::max<std::int64_t>(*extent, 1);
            if (points > 1000000)
                return -1;
        }
        work += points;
    }
    return work;
}

void exercise(const frontend::LiftedProgram &program, const std::string &text)
{
    if (Status valid = program.graph.validate(); !valid)
        violated("a lifted program failed Graph::validate", valid.error().toString() + "\n--- input:\n" + text);
    (void)program.graph.toString();
    (void)frontend::liftToJson(program).dump();

    ir::SizeBindings sizes;
    std::uint64_t hash = text.size();
    for (const std::string &name : program.graph.sizeVars()) {
        hash = hash * 31 + name.size();
        sizes[name] = 1 + static_cast<std::int64_t>(hash % 3);
    }
    if (estimateWork(program.graph, sizes) < 0)
        return;
    ir::TensorValues inputs;
    for (const ir::Tensor *t : program.graph.inputs()) {
        const std::int64_t n = ir::elementCount(t->shape.evaluate(sizes).value());
        ir::TensorData data(static_cast<std::size_t>(n));
        for (std::size_t i = 0; i < data.size(); ++i)
            data[i] = ir::isFloat(t->dtype) ? 0.25 * static_cast<double>(i % 7) - 0.5 : static_cast<double>(i % 3);
        inputs.emplace(t->name, std::move(data));
    }
    // Faults (out-of-bounds reads, integer division by zero) are errors, never crashes.
    (void)ir::interpret(program.graph, sizes, inputs);
}

void checkFailure(const Error &error, const char *frontend, const std::string &text)
{
    (void)frontend::liftFailureToJson("fuzz", error).dump();
    if (error.kind == ErrorKind::Parse && (!error.location || !error.location->known()))
        violated(frontend, "a parse error without a location: " + error.toString() + "\n--- input:\n" + text);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    const std::string text(reinterpret_cast<const char *>(data), size);

    auto te = frontend::liftTensorExpressions(text, "fuzz.te");
    if (te)
        exercise(*te, text);
    else
        checkFailure(te.error(), ".te frontend", text);

#ifndef STITCH_FUZZ_TE_ONLY
    const frontend::SourceIndex index = frontend::indexCudaSource(text, "fuzz.cu");
    (void)index;
    auto cuda = frontend::liftCudaProgram(text, "fuzz.cu");
    if (cuda)
        exercise(*cuda, text);
    else
        (void)frontend::liftFailureToJson("fuzz.cu", cuda.error()).dump();
#endif
    return 0;
}
