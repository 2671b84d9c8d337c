#include "core/agents/GpuTimes.h"

#include "core/codegen/Program.h"
#include "core/runner/Runner.h"

#include <limits>

namespace stitch::agents {

GpuTimes::GpuTimes(runner::Runner &runner, std::string arch, rubric::CompileCache *cache, int repeats)
    : m_runner(runner), m_arch(std::move(arch)), m_cache(cache), m_repeats(std::max(repeats, 1))
{
}

GpuTimes::Entry GpuTimes::measure(const schedule::Problem &problem, const schedule::Schedule &schedule) const
{
    auto program = codegen::generateProgram(problem, schedule);
    if (!program)
        return {std::numeric_limits<double>::infinity(), "not generated: " + program.error().message};
    auto plan = codegen::toLaunchPlan(*program, problem.graph, problem.sizes);
    if (!plan)
        return {std::numeric_limits<double>::infinity(), "no launch plan: " + plan.error().message};
    std::vector<char> cubin;
    if (m_cache) {
        auto compiled = m_cache->compile(program->source, m_arch, program->name + ".cu");
        if (!compiled)
            return {std::numeric_limits<double>::infinity(), "does not compile: " + compiled.error().message};
        cubin = (*compiled)->cubin;
    } else {
        auto compiled = codegen::compileGenerated(program->source, program->name + ".cu", m_arch);
        if (!compiled)
            return {std::numeric_limits<double>::infinity(), "does not compile: " + compiled.error().message};
        cubin = std::move(compiled->cubin);
    }
    runner::RunRequest request;
    request.job.module = std::move(cubin);
    request.job.plan = std::move(*plan);
    // Ranking only: zero-filled inputs are set on the device (no host data per candidate), as
    // `stitchcuda bench`'s sweep does; the caller verifies the program it keeps.
    for (auto &b : request.job.plan.buffers)
        if (b.role == runner::BufferRole::Input)
            b.init.kind = runner::BufferInit::Kind::Zero;
    request.job.measure = {false, true, 2, m_repeats, true, false, false};
    request.job.deadlineMs = 20000;
    std::lock_guard gpu(m_gpu);
    auto r = m_runner.run(std::move(request));
    if (!r)
        return {std::numeric_limits<double>::infinity(), "did not run on the GPU: " + r.error().message};
    if (!r->timing)
        return {std::numeric_limits<double>::infinity(), "ran without a timing"};
    return {r->timing->medianMs, {}};
}

std::optional<double> GpuTimes::lookup(const schedule::Problem &problem, const schedule::Schedule &schedule) const
{
    const std::string key = scheduleKey(problem, schedule);
    {
        std::lock_guard lock(m_mutex);
        if (auto it = m_results.find(key); it != m_results.end())
            return it->second.ms;
    }
    Entry e = measure(problem, schedule);
    std::lock_guard lock(m_mutex);
    ++m_measurements;
    m_failures += e.error.empty() ? 0 : 1;
    return m_results.emplace(key, std::move(e)).first->second.ms;
}

std::string GpuTimes::failure(const schedule::Problem &problem, const schedule::Schedule &schedule) const
{
    std::lock_guard lock(m_mutex);
    auto it = m_results.find(scheduleKey(problem, schedule));
    return it == m_results.end() || it->second.error.empty() ? "the measurement failed" : it->second.error;
}

int GpuTimes::measurements() const
{
    std::lock_guard lock(m_mutex);
    return m_measurements;
}

int GpuTimes::failures() const
{
    std::lock_guard lock(m_mutex);
    return m_failures;
}

} // namespace stitch::agents
