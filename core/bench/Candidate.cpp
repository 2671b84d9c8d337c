#include "core/bench/Candidate.h"

#include "core/rubric/PerfModel.h"

namespace stitch::bench {

Result<BuiltCandidate> buildCandidate(const schedule::Problem &problem, const schedule::Schedule &s, const std::string &arch)
{
    auto program = codegen::generateProgram(problem, s);
    if (!program)
        return program.error();
    auto plan = codegen::toLaunchPlan(*program, problem.graph, problem.sizes);
    if (!plan)
        return plan.error();
    auto compiled = codegen::compileGenerated(program->source, program->name + ".cu", arch);
    if (!compiled)
        return compiled.error();
    return BuiltCandidate{std::move(*program), std::move(*plan), std::move(*compiled)};
}

schedule::Schedule referenceSchedule(const schedule::Problem &problem)
{
    schedule::Schedule s = rubric::genericSchedule(problem);
    for (auto &g : s.groups)
        g.set("accumulate", 1);
    return s;
}

std::string scheduleText(const schedule::Schedule &s)
{
    std::string out;
    for (const auto &g : s.groups)
        out += (out.empty() ? "" : "; ") + schedule::describe(g);
    return out;
}

} // namespace stitch::bench
