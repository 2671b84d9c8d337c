// The rubric facade and the compile cache.
//   Problem + GeneratedProgram -> analyzeProgram -> PerfModel -> every dimension -> RubricReport
#include "core/rubric/Rubric.h"

#include "core/codegen/Program.h"
#include "core/common/Sha256.h"

#include <algorithm>
#include <chrono>

namespace stitch::rubric {

const RubricScore *RubricReport::programScore(const std::string &dimension) const
{
    return findScore(program, dimension);
}

const RubricScore *RubricReport::kernelScore(std::size_t kernel, const std::string &dimension) const
{
    return kernel < kernels.size() ? findScore(kernels[kernel].scores, dimension) : nullptr;
}

Rubric::Rubric()
{
    add(makeCoalescing());
    add(makeArithmeticIntensity());
    add(makeDivergence());
    add(makeOccupancy());
    add(makeInstructionMix());
    add(makeBankConflicts());
    add(makeHardLimits());
    add(makeFinalPerformance());
}

void Rubric::add(std::unique_ptr<RubricDimension> dimension)
{
    m_dimensions.push_back(std::move(dimension));
}

Result<RubricReport> Rubric::scoreProgram(const schedule::Problem &problem, const codegen::GeneratedProgram &program,
                                          const cuda::CompileResult *compiled, const ScoreOptions &options) const
{
    const auto start = std::chrono::steady_clock::now();
    auto facts = analyzeProgram(problem, program, compiled, options.gpu);
    if (!facts.ok())
        return facts.error();
    const ProgramPrediction prediction = m_model.predict(*facts);

    // The generic baseline depends only on the problem: computed once per graph, sizes and GPU.
    std::string key = problem.graph.name() + "|" + problem.arch.name + "|" + facts->gpu->name + "|" +
                      std::to_string(problem.graph.ops().size());
    for (const auto &[n, v] : problem.sizes)
        key += "|" + n + "=" + std::to_string(v);
    for (const auto &op : problem.graph.ops())
        key += "|" + op.name;
    double baseline = 0;
    {
        std::lock_guard lock(m_mutex);
        if (auto it = m_baselines.find(key); it != m_baselines.end())
            baseline = it->second;
    }
    if (baseline <= 0) {
        auto b = m_model.predictSchedule(problem, genericSchedule(problem));
        baseline = b.ok() ? *b : 0;
        std::lock_guard lock(m_mutex);
        m_baselines[key] = baseline;
    }

    RubricInput input;
    input.graph = &problem.graph;
    input.compiled = compiled;
    input.arch = &problem.arch;
    input.cudaSource = program.source;
    input.problem = &problem;
    input.program = &program;
    input.gpu = facts->gpu;
    input.facts = &*facts;
    input.measuredMs = options.measuredMs;
    input.baselineMeasuredMs = options.baselineMeasuredMs;
    if (baseline > 0)
        input.baselinePredictedMs = baseline;

    RubricReport report;
    report.predictedMs = prediction.ms;
    report.baselinePredictedMs = baseline;
    report.calibration = prediction.calibration;
    for (std::size_t i = 0; i < facts->kernels.size(); ++i) {
        KernelReport kr;
        kr.kernel = facts->kernels[i].name;
        kr.decisions = schedule::describe(program.kernels[i].group);
        kr.prediction = prediction.kernels[i];
        input.kernel = static_cast<int>(i);
        for (const auto &d : m_dimensions)
            if (d->applies(input))
                kr.scores.push_back(d->evaluate(input));
        report.kernels.push_back(std::move(kr));
    }
    input.kernel = -1;
    for (const auto &d : m_dimensions) {
        if (!d->applies(input))
            continue;
        report.program.push_back(d->evaluate(input));
        report.hardViolation = report.hardViolation || report.program.back().hardViolation;
    }
    report.scoringMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return report;
}

CompileCache::CompileCache(std::optional<CompileStore> store, Compiler compiler, std::size_t memoryEntries)
    : m_store(std::move(store)), m_compiler(std::move(compiler)), m_memoryEntries(std::max<std::size_t>(memoryEntries, 1))
{
}

Result<std::shared_ptr<const cuda::CompileResult>>
CompileCache::compile(const std::string &source, const std::string &arch, const std::string &fileName)
{
    const std::string key = sha256Hex(source) + "|" + arch;
    {
        std::lock_guard lock(m_mutex);
        if (auto it = m_index.find(key); it != m_index.end()) {
            ++m_stats.memoryHits;
            m_recent.splice(m_recent.begin(), m_recent, it->second);
            return it->second->second;
        }
    }
    // The store and NVRTC are read outside the lock: calibrate fills the cache from every core.
    std::shared_ptr<const cuda::CompileResult> result;
    bool fromStore = false;
    std::optional<Error> saveError;
    if (m_store)
        if (auto kept = m_store->load(source, arch)) {
            result = std::make_shared<const cuda::CompileResult>(std::move(*kept));
            fromStore = true;
        }
    if (!result) {
        auto r = m_compiler ? m_compiler(source, fileName, arch) : codegen::compileGenerated(source, fileName, arch);
        if (!r.ok())
            return r.error();
        if (m_store)
            if (auto saved = m_store->save(source, arch, *r); !saved)
                saveError = saved.error();
        result = std::make_shared<const cuda::CompileResult>(std::move(*r));
    }
    std::lock_guard lock(m_mutex);
    ++(fromStore ? m_stats.storeHits : m_stats.compiled);
    if (saveError) {
        ++m_stats.storeFailures;
        if (!m_storeError)
            m_storeError = std::move(saveError);
    }
    if (auto it = m_index.find(key); it != m_index.end()) // another thread put it there meanwhile
        return it->second->second;
    m_recent.emplace_front(key, std::move(result));
    m_index[key] = m_recent.begin();
    if (m_recent.size() > m_memoryEntries) {
        m_index.erase(m_recent.back().first);
        m_recent.pop_back();
    }
    return m_recent.front().second;
}

std::size_t CompileCache::size() const
{
    std::lock_guard lock(m_mutex);
    return m_recent.size();
}

CompileCache::Stats CompileCache::stats() const
{
    std::lock_guard lock(m_mutex);
    return m_stats;
}

std::optional<Error> CompileCache::storeError() const
{
    std::lock_guard lock(m_mutex);
    return m_storeError;
}

Result<ScheduleScore> scoreSchedule(const Rubric &rubric, const schedule::Problem &problem,
                                    const schedule::Schedule &schedule, CompileCache *cache)
{
    auto program = codegen::generateProgram(problem, schedule);
    if (!program.ok())
        return program.error();
    ScheduleScore out{std::move(*program), nullptr, {}};
    if (cache) {
        auto compiled = cache->compile(out.program.source, problem.arch.name, out.program.name + ".cu");
        if (!compiled.ok()) {
            Error e = compiled.error();
            e.message = "internal error: the generated program does not compile: " + e.message;
            return e;
        }
        out.compiled = *compiled;
    }
    auto report = rubric.scoreProgram(problem, out.program, out.compiled.get());
    if (!report.ok())
        return report.error();
    out.report = std::move(*report);
    return out;
}

} // namespace stitch::rubric
