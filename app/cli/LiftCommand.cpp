// `stitchcuda lift FILE [--json] [--eval]`: what the Parse agent sees in a .te or .cu file.
#include "Commands.h"
#include "ProblemInput.h"

#include "core/frontend/Lift.h"
#include "core/frontend/LiftJson.h"
#include "core/ir/Interpreter.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <optional>
#include <random>

namespace stitch::cli {

namespace {

struct Checksum {
    std::string name;
    std::vector<std::int64_t> extents;
    double sum = 0, absSum = 0, min = 0, max = 0;
};

struct EvalResult {
    ir::SizeBindings sizes;
    std::vector<Checksum> outputs;
};

/// Random inputs (floats uniform in [-1, 1), integers in {0, 1, 2, 3}, bools 0/1), then the CPU
/// interpreter; reports a checksum of every output.
Result<EvalResult> evaluate(const frontend::LiftedProgram &program, const ir::SizeBindings &sizes, unsigned seed)
{
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> real(-1.0, 1.0);
    std::uniform_int_distribution<int> small(0, 3);
    ir::TensorValues inputs;
    for (const ir::Tensor *t : program.graph.inputs()) {
        auto extents = t->shape.evaluate(sizes);
        if (!extents)
            return extents.error();
        // In double: ir::elementCount would overflow on shapes such as f32[2^31, 2^31, 2^31].
        double count = 1;
        for (std::int64_t extent : *extents)
            count *= static_cast<double>(extent);
        if (count > static_cast<double>(ir::InterpreterOptions{}.maxTensorElements)) {
            char text[32];
            std::snprintf(text, sizeof text, "%.3g", count);
            return makeError(ErrorKind::ResourceLimit, "input '" + t->name + "' has " + text
                                                           + " elements, too many for the interpreter");
        }
        ir::TensorData data(static_cast<std::size_t>(ir::elementCount(*extents)));
        for (double &x : data) {
            if (ir::isFloat(t->dtype))
                x = real(rng);
            else
                x = t->dtype == ir::DType::Bool ? small(rng) % 2 : small(rng);
        }
        inputs.emplace(t->name, std::move(data));
    }
    auto values = ir::interpret(program.graph, sizes, inputs);
    if (!values)
        return values.error();
    EvalResult result;
    result.sizes = sizes;
    for (const ir::Tensor *t : program.graph.outputs()) {
        Checksum c;
        c.name = t->name;
        c.extents = t->shape.evaluate(sizes).value();
        const ir::TensorData &data = values->at(t->name);
        if (!data.empty()) {
            c.min = *std::min_element(data.begin(), data.end());
            c.max = *std::max_element(data.begin(), data.end());
        }
        for (double x : data) {
            c.sum += x;
            c.absSum += std::fabs(x);
        }
        result.outputs.push_back(std::move(c));
    }
    return result;
}

std::string extentsText(const std::vector<std::int64_t> &extents)
{
    std::string text = "[";
    for (std::size_t i = 0; i < extents.size(); ++i)
        text += (i ? ", " : "") + std::to_string(extents[i]);
    return text + "]";
}

nlohmann::json evalToJson(const EvalResult &result, unsigned seed)
{
    nlohmann::json outputs = nlohmann::json::array();
    for (const Checksum &c : result.outputs) {
        outputs.push_back({{"name", c.name}, {"extents", c.extents}, {"sum", c.sum}, {"absSum", c.absSum},
                           {"min", c.min}, {"max", c.max}});
    }
    nlohmann::json sizes = nlohmann::json::object();
    for (const auto &[name, value] : result.sizes)
        sizes[name] = value;
    return {{"seed", seed}, {"sizes", sizes}, {"outputs", outputs}};
}

void printTensors(const frontend::LiftedProgram &program, ir::TensorRole role, const char *heading)
{
    bool first = true;
    for (const ir::Tensor &t : program.graph.tensors()) {
        if (t.role != role)
            continue;
        if (first)
            std::cout << heading << "\n";
        first = false;
        std::cout << "  " << t.toString() << "\n";
    }
}

void printProgram(const frontend::LiftedProgram &program)
{
    const ir::Graph &graph = program.graph;
    std::cout << program.sourceFile << ": graph " << graph.name() << " (" << program.language << "), "
              << graph.ops().size() << " op" << (graph.ops().size() == 1 ? "" : "s") << "\n";
    const std::vector<std::string> sizeNames = graph.sizeVars();
    if (!sizeNames.empty() || !program.sizes.empty())
        std::cout << "sizes\n";
    for (const std::string &name : sizeNames) {
        auto it = program.sizes.find(name);
        std::cout << "  " << name << (it != program.sizes.end() ? " = " + std::to_string(it->second) : std::string()) << "\n";
    }
    for (const auto &[name, value] : program.sizes) {
        if (std::find(sizeNames.begin(), sizeNames.end(), name) == sizeNames.end())
            std::cout << "  " << name << " = " << value << " (unused)\n";
    }
    printTensors(program, ir::TensorRole::Input, "inputs");
    printTensors(program, ir::TensorRole::Intermediate, "intermediates");
    printTensors(program, ir::TensorRole::Output, "outputs");
    if (!graph.ops().empty())
        std::cout << "ops\n";
    for (const ir::ComputeOp &op : graph.ops()) {
        std::cout << "  " << (op.source ? op.source->begin.toString() + ": " : std::string()) << op.toString() << "\n";
        const std::string domain = op.domainString();
        if (!domain.empty())
            std::cout << "      where " << domain << "\n";
    }
    if (!program.launches.empty())
        std::cout << "launches\n";
    for (const frontend::LiftedLaunch &l : program.launches) {
        std::cout << "  " << l.location.toString() << ": " << l.kernel << "<<<" << l.grid << ", " << l.block << ">>>(";
        for (std::size_t i = 0; i < l.arguments.size(); ++i)
            std::cout << (i ? ", " : "") << l.arguments[i];
        std::cout << ")";
        if (l.ops.empty()) {
            std::cout << " -> opaque\n";
            continue;
        }
        std::cout << " -> ";
        for (std::size_t i = 0; i < l.ops.size(); ++i)
            std::cout << (i ? ", " : "") << l.ops[i];
        std::cout << "\n";
    }
    if (!program.opaque.empty())
        std::cout << "opaque kernels\n";
    for (const frontend::OpaqueKernel &k : program.opaque) {
        std::cout << "  " << k.range.begin.toString() << ": " << k.name;
        if (!k.reads.empty() || !k.writes.empty()) {
            std::cout << " (reads";
            for (const std::string &r : k.reads)
                std::cout << " " << r;
            std::cout << "; writes";
            for (const std::string &w : k.writes)
                std::cout << " " << w;
            std::cout << ")";
        }
        std::cout << "\n      why: " << k.why.toString() << "\n";
    }
}

void printEval(const EvalResult &result, unsigned seed)
{
    std::cout << "eval (seed " << seed << ")\n";
    for (const Checksum &c : result.outputs) {
        std::printf("  %s%s  sum=%.9g  abs-sum=%.9g  min=%.9g  max=%.9g\n", c.name.c_str(), extentsText(c.extents).c_str(),
                    c.sum, c.absSum, c.min, c.max);
    }
}

} // namespace

int runLift(const LiftOptions &options)
{
    const auto sourceFlags = sourceOptions(options.source);
    if (!sourceFlags) {
        std::cerr << "stitchcuda: " << sourceFlags.error().message << "\n";
        return 2;
    }
    std::string source;
    if (!readFile(options.file, source))
        return 2;
    const auto lifted = frontend::liftFile(source, options.file, *sourceFlags);
    if (!lifted) {
        const Error &e = lifted.error();
        if (options.json) {
            std::cout << frontend::liftFailureToJson(options.file, e).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
        } else if (e.diagnostics.empty()) {
            std::cerr << e.toString() << "\n";
        } else {
            for (const Diagnostic &d : e.diagnostics)
                std::cerr << d.toString() << "\n";
        }
        // The frontends reject input with Parse and Unsupported; anything else is the tool's problem.
        return e.kind == ErrorKind::Parse || e.kind == ErrorKind::Unsupported ? 1 : 2;
    }

    std::optional<Result<EvalResult>> eval;
    if (options.eval) {
        auto sizes = bindSizes(*lifted, options.sizes);
        if (!sizes) {
            std::cerr << "stitchcuda: " << sizes.error().message << "\n";
            return 2;
        }
        eval = evaluate(*lifted, *sizes, options.seed);
    }

    if (options.json) {
        nlohmann::json j = frontend::liftToJson(*lifted);
        if (eval && *eval)
            j["eval"] = evalToJson(**eval, options.seed);
        else if (eval)
            j["eval"] = {{"error", {{"kind", errorKindName(eval->error().kind)}, {"message", eval->error().message}}}};
        std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    } else {
        for (const Diagnostic &d : lifted->diagnostics)
            std::cerr << d.toString() << "\n";
        printProgram(*lifted);
        if (eval && *eval)
            printEval(**eval, options.seed);
    }
    if (eval && !*eval) {
        // The program itself faulted (an out-of-bounds read, an integer division by zero, ...).
        std::cerr << "stitchcuda: eval: " << eval->error().toString() << "\n";
        return 1;
    }
    return 0;
}

} // namespace stitch::cli
