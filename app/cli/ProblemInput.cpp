#include "ProblemInput.h"

#include "Commands.h"
#include "core/codegen/AsWritten.h"
#include "core/rubric/CheckedDefault.h"
#include "core/runner/PlanFile.h"

#include <cstdio>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <iostream>

namespace stitch::cli {

int reportError(const Error &e)
{
    const std::string where = e.location ? e.location->toString() + ": " : "stitchcuda: ";
    std::cerr << where << "error: " << e.message << "\n";
    for (std::size_t i = 1; i < e.diagnostics.size(); ++i)
        std::cerr << "  " << e.diagnostics[i].message << "\n";
    return 1;
}

Result<ir::SizeBindings> bindSizes(const frontend::LiftedProgram &program, const std::vector<std::string> &overrides)
{
    ir::SizeBindings sizes = program.sizes;
    for (const std::string &item : overrides) {
        const auto eq = item.find('=');
        std::int64_t value = 0;
        const char *begin = item.data() + (eq == std::string::npos ? 0 : eq + 1);
        const char *end = item.data() + item.size();
        const auto [stop, ec] = std::from_chars(begin, end, value);
        if (eq == std::string::npos || eq == 0 || ec != std::errc() || stop != end || value < 0)
            return makeError(ErrorKind::InvalidArgument, "--size expects NAME=VALUE with VALUE >= 0, got '" + item + "'");
        sizes[item.substr(0, eq)] = value;
    }
    for (const std::string &name : program.graph.sizeVars()) {
        if (!sizes.count(name))
            return makeError(ErrorKind::InvalidArgument, "size '" + name + "' has no value; give one with --size " + name + "=VALUE");
    }
    return sizes;
}

Result<frontend::SourceOptions> sourceOptions(const SourceFlags &flags)
{
    frontend::SourceOptions options;
    options.includeDirectories = flags.includeDirs;
    for (const std::string &d : flags.defines) {
        auto parsed = frontend::parseDefine(d);
        if (!parsed)
            return parsed.error();
        options.defines.push_back(std::move(*parsed));
    }
    return options;
}

Result<std::string> referenceSource(const std::string &dir, const std::string &name, const frontend::LiftedProgram &lifted,
                                    const std::string &file)
{
    namespace fs = std::filesystem;
    if (lifted.expandedSource.empty())
        return fs::absolute(file).lexically_normal().string();
    const std::string path = fs::absolute(fs::path(dir) / (name + ".lifted.cu")).lexically_normal().string();
    std::ofstream out(path, std::ios::binary);
    out << lifted.expandedSource;
    if (!out)
        return makeError(ErrorKind::Io, "cannot write " + path);
    return path;
}

std::optional<ProblemInput> loadProblem(const std::string &file, const std::vector<std::string> &sizeOverrides,
                                        const std::string &archName, const std::string &schedulePath, bool tf32,
                                        int &exitCode, const SourceFlags &flags)
{
    exitCode = 2;
    auto options = sourceOptions(flags);
    if (!options) {
        std::cerr << "stitchcuda: " << options.error().message << "\n";
        return std::nullopt;
    }
    std::string text;
    if (!readFile(file, text))
        return std::nullopt;
    ProblemInput in;
    auto lifted = frontend::cudalift::liftFileDetailed(text, file, *options);
    if (!lifted.ok()) {
        exitCode = reportError(lifted.error());
        return std::nullopt;
    }
    in.lifted = std::move(lifted->program);
    in.detail = std::move(lifted->detail);
    in.source = std::move(*options);
    auto sizes = bindSizes(in.lifted, sizeOverrides);
    if (!sizes.ok()) {
        std::cerr << "stitchcuda: " << sizes.error().message << "\n";
        return std::nullopt;
    }
    in.sizes = std::move(*sizes);
    in.arch = ArchDatabase::builtin().arch(archName);
    if (!in.arch) {
        std::cerr << "stitchcuda: unknown architecture '" << archName << "'\n";
        return std::nullopt;
    }
    if (!schedulePath.empty()) {
        std::string scheduleText;
        if (!readFile(schedulePath, scheduleText))
            return std::nullopt;
        auto parsed = schedule::parseSchedule(scheduleText, schedulePath);
        if (!parsed.ok()) {
            exitCode = reportError(parsed.error());
            return std::nullopt;
        }
        in.schedule = std::move(*parsed);
    } else {
        in.schedule.precision = tf32 ? schedule::Precision::TF32 : schedule::Precision::FP32;
        auto def = rubric::modelCheckedDefault(in.problem(), &in.scheduleNotes);
        if (!def.ok()) {
            exitCode = reportError(def.error());
            return std::nullopt;
        }
        in.schedule = std::move(*def);
    }
    return in;
}

Result<codegen::CarriedKernels> carriedKernels(const ProblemInput &input, const std::string &file)
{
    if (!input.detail)
        return codegen::CarriedKernels{};
    return codegen::carryOpaqueKernels(*input.detail, file, input.sizes);
}

void printCarried(const codegen::CarriedKernels &carried)
{
    if (!carried.launches.empty())
        std::printf("carried unchanged (the lifter keeps them opaque; they run in the input's order):\n");
    for (const auto &c : carried.launches)
        std::printf("  %s at %s: %s\n", c.kernel.c_str(), c.where.toString().c_str(), c.why.c_str());
    for (const auto &n : carried.notes)
        std::printf("  note: %s\n", n.toString().c_str());
}

Result<std::string> writeInputPlan(const std::string &dir, const std::string &name, const ProblemInput &input,
                                   const std::string &file)
{
    namespace fs = std::filesystem;
    if (!input.detail)
        return makeError(ErrorKind::Unsupported, file + " is not a CUDA program: it has no form as written");
    const frontend::cudalift::CudaLiftDetail *detail = &*input.detail;
    auto program = codegen::asWrittenProgram(detail->source, file, *detail, input.sizes);
    if (!program)
        return program.error();
    runner::PlanFile plan;
    plan.path = (fs::path(dir) / (name + ".input.plan.json")).string();
    plan.sourcePath = (fs::path(dir) / (name + ".input.cu")).string();
    plan.defines = program->defines;
    plan.plan = program->plan;
    // The same CPU reference as the generated plan's: the lifted graph at the same sizes.
    auto reference = referenceSource(dir, name, input.lifted, file);
    if (!reference)
        return reference.error();
    plan.cpuReference = runner::PlanCpuReference{*reference, input.sizes, program->tensorForBuffer, program->inputTensorForBuffer};
    for (const auto &[path, content] : {std::pair{plan.sourcePath, program->source}, std::pair{plan.path, runner::planFileText(plan)}}) {
        std::ofstream out(path, std::ios::binary);
        out << content;
        if (!out)
            return makeError(ErrorKind::Io, "cannot write " + path);
    }
    return plan.path;
}

} // namespace stitch::cli
