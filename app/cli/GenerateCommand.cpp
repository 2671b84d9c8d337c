// `stitchcuda generate`: graph + schedule -> one complete CUDA program, with the schedule and a
// launch plan next to it so `stitchcuda run` can verify and time it.
#include "Commands.h"
#include "ProblemInput.h"

#include "core/arch/ArchDatabase.h"
#include "core/codegen/Program.h"
#include "core/frontend/Lift.h"
#include "core/runner/PlanFile.h"
#include "core/schedule/Space.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

namespace stitch::cli {

namespace fs = std::filesystem;

namespace {

bool writeText(const fs::path &path, const std::string &text)
{
    std::ofstream out(path, std::ios::binary);
    out << text;
    if (!out) {
        std::cerr << "stitchcuda: cannot write " << path.string() << "\n";
        return false;
    }
    return true;
}

void printSpace(const schedule::Schedule &s, const schedule::Problem &problem)
{
    for (const auto &g : s.groups) {
        auto a = schedule::analyzeGroup(problem.graph, g.ops, g.strategy);
        if (!a.ok())
            continue;
        std::printf("\n%s [%s]: legal values given the other decisions\n", g.name.c_str(), schedule::strategyName(g.strategy));
        for (const auto &d : schedule::decisionDefs(g.strategy)) {
            std::printf("  %-16s %-24s", d.key.c_str(), (schedule::categoryName(d.category)));
            for (const auto &o : schedule::legalValues(*a, g, d.key, problem))
                std::printf(" %s%s%s", o.value == g.value(d.key) ? "[" : "", o.text.c_str(),
                            o.legal ? (o.value == g.value(d.key) ? "]" : "") : "(x)");
            std::printf("\n");
            for (const auto &o : schedule::legalValues(*a, g, d.key, problem))
                if (!o.legal)
                    std::printf("      %s: %s\n", o.text.c_str(), o.why.c_str());
        }
    }
}

} // namespace

int runGenerate(const GenerateOptions &options)
{
    int exitCode = 2;
    auto input = loadProblem(options.file, options.sizes, options.arch, options.schedule, options.tf32, exitCode,
                             options.source);
    if (!input)
        return exitCode;
    const frontend::LiftedProgram *lifted = &input->lifted;
    // Kernels the lifter keeps opaque run unchanged in the generated program; one that cannot is
    // an error, never a kernel silently lost.
    auto carried = carriedKernels(*input, options.file);
    if (!carried.ok())
        return reportError(carried.error());
    const schedule::Schedule &sched = input->schedule;
    const schedule::Problem problem = input->problem();
    auto program = codegen::generateProgram(problem, sched, &*carried);
    if (!program.ok())
        return reportError(program.error());

    std::printf("%s: %zu op%s -> %zu kernel%s for %s\n", options.file.c_str(), lifted->graph.ops().size(),
                lifted->graph.ops().size() == 1 ? "" : "s", program->kernels.size(),
                program->kernels.size() == 1 ? "" : "s", options.arch.c_str());
    for (const auto &k : program->kernels)
        std::printf("  %s\n", codegen::describeKernel(k).c_str());
    for (const auto &n : input->scheduleNotes)
        std::printf("  note: %s\n", n.c_str());
    printCarried(program->carried);
    if (options.explain)
        printSpace(sched, problem);

    if (!options.noCompile) {
        auto compiled = codegen::compileGenerated(program->source, program->name + ".cu", options.arch, true);
        if (!compiled.ok()) {
            std::cerr << "stitchcuda: internal error: the generated program does not compile:\n";
            return reportError(compiled.error());
        }
        std::printf("\n%-36s %5s %9s %7s\n", "kernel", "regs", "smem [B]", "spills");
        for (const auto &k : compiled->kernels) {
            int dynamicShared = 0;
            for (const auto &g : program->kernels)
                if (g.code.name == k.name)
                    dynamicShared = g.code.dynamicSharedBytes;
            std::printf("%-36s %5d %9d %7s\n", k.name.c_str(), k.registers, k.sharedBytes + dynamicShared,
                        k.spillStoreBytes < 0 ? "?" : std::to_string(k.spillStoreBytes + k.spillLoadBytes).c_str());
        }
    }
    if (options.out.empty()) {
        if (options.print)
            std::cout << "\n" << program->source;
        return 0;
    }
    return writeGenerated(options.out, *program, *input, options.file) ? 0 : 2;
}

bool writeGenerated(const std::string &out, const codegen::GeneratedProgram &generated, const ProblemInput &input,
                    const std::string &file, bool inputPlan)
{
    const codegen::GeneratedProgram *program = &generated;
    const frontend::LiftedProgram *lifted = &input.lifted;
    const ir::SizeBindings &sizes = input.sizes;
    const schedule::Schedule &sched = generated.schedule;
    std::error_code ec;
    fs::create_directories(out, ec);
    if (ec) {
        std::cerr << "stitchcuda: cannot create " << out << ": " << ec.message() << "\n";
        return false;
    }
    const fs::path dir = out;
    const std::string source = program->name + ".cu";
    if (!writeText(dir / source, program->source) ||
        !writeText(dir / (program->name + ".schedule.json"), schedule::toJson(sched)))
        return false;
    auto plan = codegen::toLaunchPlan(*program, lifted->graph, sizes);
    if (!plan.ok()) {
        reportError(plan.error());
        return false;
    }
    // The plan `stitchcuda run` reads: the generated program, the lifted graph as the CPU
    // reference, and what the performance model needs where no GPU is present.
    runner::PlanFile planFile;
    planFile.path = (dir / (program->name + ".plan.json")).string();
    planFile.sourcePath = (dir / source).string();
    planFile.plan = std::move(*plan);
    auto reference = referenceSource(out, program->name, *lifted, file);
    if (!reference.ok()) {
        reportError(reference.error());
        return false;
    }
    const std::string graphFile = *reference;
    planFile.cpuReference = runner::PlanCpuReference{graphFile, sizes, {}};
    planFile.cpuReference->carriedTensors = program->carried.carriedTensors;
    planFile.cpuReference->uncheckedBuffers = codegen::uncheckedBuffers(program->carried, lifted->graph);
    planFile.model = runner::PlanFile::Model{graphFile, (dir / (program->name + ".schedule.json")).string(), sizes};
    planFile.precision =
        program->schedule.precision == schedule::Precision::TF32 ? runner::PrecisionPolicy::TF32 : runner::PrecisionPolicy::FP32;
    if (!writeText(planFile.path, runner::planFileText(planFile)))
        return false;
    std::string asWritten;
    if (inputPlan && lifted->language == "cuda") {
        auto written = writeInputPlan(out, program->name, input, file);
        if (written)
            asWritten = "; " + program->name + ".input.cu and " + program->name + ".input.plan.json, the input as written (stitchcuda run " +
                        *written + ")";
        else
            std::cerr << "note: the input as written has no plan: " << written.error().toString() << "\n";
    }
    std::printf("\nwrote %s, %s.schedule.json and %s.plan.json (stitchcuda run %s)%s to %s\n", source.c_str(),
                program->name.c_str(), program->name.c_str(), (dir / (program->name + ".plan.json")).string().c_str(),
                asWritten.c_str(), out.c_str());
    return true;
}

} // namespace stitch::cli
