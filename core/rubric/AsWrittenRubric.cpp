// The rubric of the program as written: per launch, the facts AsWrittenFacts.cpp replays from the
// lifter's record, NVRTC's resources, PTX and SASS of the source as written, then the rubric's own
// dimensions (the same objects Rubric::scoreProgram runs) on those facts.
//   source -> lift -> compileSourceAsWritten -> describeLaunch + resources -> dimensions -> AsWrittenReport
#include "core/rubric/AsWrittenRubric.h"

#include "core/codegen/AsWritten.h"
#include "core/cuda/SassScan.h"
#include "core/cuda/SourceCompiler.h"
#include "core/rubric/Dimensions.h"
#include "core/rubric/Rubric.h"
#include "core/runner/PlanFile.h"

#include <chrono>

namespace stitch::rubric {

namespace fl = frontend::cudalift;

const RubricScore *AsWrittenReport::programScore(const std::string &dimension) const
{
    return findScore(program, dimension);
}

const RubricScore *AsWrittenReport::kernelScore(std::size_t kernel, const std::string &dimension) const
{
    return kernel < kernels.size() ? findScore(kernels[kernel].scores, dimension) : nullptr;
}

const MissingDimension *AsWrittenReport::missing(std::size_t kernel, const std::string &dimension) const
{
    if (kernel >= kernels.size())
        return nullptr;
    for (const auto &m : kernels[kernel].missing)
        if (m.dimension == dimension)
            return &m;
    return nullptr;
}

namespace {

/// The sizes the launches and indices evaluate at: every size the source defines, then `overrides`.
ir::SizeBindings boundSizes(const fl::CudaLiftDetail &detail, const ir::SizeBindings &overrides)
{
    ir::SizeBindings sizes = detail.definedSizes;
    for (const auto &[n, v] : detail.program.sizes)
        sizes[n] = v;
    for (const auto &[n, v] : overrides)
        sizes[n] = v;
    return sizes;
}

bool isMissing(const std::vector<MissingDimension> &missing, const std::string &dimension)
{
    for (const auto &m : missing)
        if (m.dimension == dimension)
            return true;
    return false;
}

const Rubric &dimensionSet()
{
    static const Rubric rubric;
    return rubric;
}

/// Reads the resources, PTX and SASS of kernel `k` from the compile (false: not in it).
bool readCompiled(KernelFacts &k, const cuda::CompileResult &compiled, const std::vector<cuda::SassKernel> &sass)
{
    const cuda::KernelResources *res = compiled.kernel(k.name);
    if (!res)
        return false;
    k.compiled = true;
    k.registers = res->registers;
    k.staticSharedBytes = res->sharedBytes;
    k.spillBytes = res->spillStoreBytes < 0 || res->spillLoadBytes < 0 ? -1 : res->spillStoreBytes + res->spillLoadBytes;
    k.localBytes = res->localBytes;
    k.ptxBody = ptxEntryBody(compiled.ptx, res->mangledName);
    if (k.ptxBody.empty())
        k.ptxBody = ptxEntryBody(compiled.ptx, k.name);
    k.ptxMix = countPtx(k.ptxBody);
    k.ptxLoop = hotLoopPtx(k.ptxBody);
    for (const auto &sk : sass)
        if (sk.mangledName == res->mangledName) {
            k.sassScanned = true;
            k.sassKernel = sk.all;
            if (const cuda::SassLoop *hot = sk.hotLoop())
                k.sassLoop = hot->mix;
        }
    return true;
}

} // namespace

Result<cuda::CompileResult> compileSourceAsWritten(const std::string &source, const std::string &fileName,
                                                   const fl::CudaLiftDetail &detail, const AsWrittenOptions &options)
{
    std::string text = source;
    if (!options.sizes.empty()) {
        auto resized = codegen::resizeSource(source, detail.sizes, boundSizes(detail, options.sizes));
        if (!resized.ok())
            return resized.error();
        text = *resized;
    }
    cuda::CompileOptions co;
    co.arch = options.arch;
    co.fileName = fileName;
    co.defines = codegen::hostConstantDefines();
    auto compiled = cuda::compileProgram(text, co);
    if (!compiled.ok())
        return compiled.error();
    if (compiled->kernels.empty()) // from the CUDA compute cache NVRTC reports no kernels: the PTX names them
        compiled->kernels = runner::kernelsFromPtx(compiled->ptx, options.arch);
    return compiled;
}

Result<AsWrittenReport> scoreAsWritten(const fl::CudaLiftDetail &detail, const std::string &fileName,
                                       const cuda::CompileResult *compiled, const AsWrittenOptions &options,
                                       const std::string &compileNote)
{
    const auto start = std::chrono::steady_clock::now();
    const ArchLimits *arch = ArchDatabase::builtin().arch(options.arch);
    if (!arch)
        return Error{ErrorKind::InvalidArgument, "unknown architecture " + options.arch};
    const GpuSpec *gpu = options.gpu ? options.gpu : ArchDatabase::builtin().defaultGpuFor(options.arch);
    if (!gpu)
        return Error{ErrorKind::InvalidArgument, "no GPU of architecture " + options.arch + " in the database"};
    if (detail.launches.empty()) {
        std::string why = "no kernel launch in " + fileName + " that the rubric can score";
        for (const auto &o : detail.program.opaque)
            why += "; " + o.name + ": " + o.why.message;
        return makeError(ErrorKind::Unsupported, why, SourceLocation{fileName, 1, 1});
    }
    const ir::SizeBindings sizes = boundSizes(detail, options.sizes);

    std::vector<cuda::SassKernel> sass;
    if (compiled && !compiled->cubin.empty())
        if (auto scanned = cuda::scanSass(compiled->cubin); scanned.ok())
            sass = std::move(*scanned);

    AsWrittenReport report;
    report.fileName = fileName;
    report.arch = options.arch;
    report.compiled = compiled != nullptr;
    report.compileNote = compileNote;
    ProgramFacts facts;
    facts.arch = arch;
    facts.gpu = gpu;
    std::vector<detail::AsWrittenLaunch> launches;
    const PerfModel model;
    for (std::size_t l = 0; l < detail.launches.size(); ++l) {
        detail::AsWrittenLaunch d = detail::describeLaunch(detail, l, sizes, *arch);
        const SourceLocation at = l < detail.program.launches.size() ? detail.program.launches[l].location
                                                                     : SourceLocation{fileName, 1, 1};
        KernelFacts &k = d.facts;
        const bool haveResources = compiled && readCompiled(k, *compiled, sass);
        if (!haveResources) {
            const std::string why = compiled ? "NVRTC's output has no kernel named " + k.name
                                             : "not compiled with NVRTC (" +
                                                   (compileNote.empty() ? std::string("--no-compile") : compileNote) +
                                                   "): registers, shared memory and PTX unknown";
            for (const char *dim : {"occupancy", "hard_limits", "instruction_mix"})
                if (!isMissing(d.missing, dim))
                    d.missing.push_back({dim, why, at});
        }
        if (haveResources && d.shapeKnown) {
            auto occ = computeOccupancy(*arch, k.threads, k.registers, k.sharedBytesTotal());
            if (occ.ok())
                k.occupancy = *occ;
            else
                k.occupancyError = occ.error().message;
        }
        facts.kernels.push_back(k);
        launches.push_back(std::move(d));
    }

    // Times: the model where a kernel maps onto its generic strategy and its resources are known.
    bool allTimed = true;
    double totalMs = 0;
    std::string untimed;
    for (std::size_t l = 0; l < launches.size(); ++l) {
        AsWrittenKernel out;
        KernelFacts &k = facts.kernels[l];
        const auto &d = launches[l];
        out.kernel = k.name;
        out.launch = l < detail.program.launches.size() ? detail.program.launches[l].location
                                                        : SourceLocation{fileName, 1, 1};
        out.launchConfig = d.launchConfig;
        out.accessModel = l < detail.accesses.size() && detail.accesses[l].has_value();
        out.mapping = d.mapping;
        out.missing = d.missing;
        if (d.genericMapping && k.occupancy) {
            KernelPrediction p = model.predictKernel(k, facts);
            k.predictedMs = p.ms;
            k.expectedOccupancy = p.achievedOccupancy;
            out.prediction = p;
            totalMs += p.ms;
        } else {
            allTimed = false;
            out.timeNote = "measure on a GPU: " + (d.genericMapping
                                                       ? std::string("its registers are not known without NVRTC")
                                                       : std::string("the model knows no strategy this kernel maps onto"));
            untimed += (untimed.empty() ? "" : "; ") + k.name + ": " + out.timeNote.substr(18);
        }
        report.kernels.push_back(std::move(out));
    }
    if (allTimed)
        report.predictedMs = totalMs;
    else
        report.timeNote = "measure on a GPU: " + untimed;

    // Every dimension per kernel, except those the kernel lacks; the program's over the kernels that have it.
    RubricInput input;
    input.arch = arch;
    input.gpu = gpu;
    input.facts = &facts;
    for (const auto &dim : dimensionSet().dimensions()) {
        const std::string name = dim->name();
        if (name == "final_performance") // relative to a generated generic schedule: the side-by-side shows the times
            continue;
        ProgramFacts subset;
        subset.arch = arch;
        subset.gpu = gpu;
        bool weighted = true;
        for (std::size_t l = 0; l < facts.kernels.size(); ++l) {
            if (isMissing(report.kernels[l].missing, name))
                continue;
            input.facts = &facts;
            input.kernel = static_cast<int>(l);
            if (!dim->applies(input))
                continue;
            report.kernels[l].scores.push_back(dim->evaluate(input));
            subset.kernels.push_back(facts.kernels[l]);
            weighted = weighted && facts.kernels[l].predictedMs > 0;
        }
        if (subset.kernels.empty())
            continue;
        if (!weighted) // no time to weigh by: every kernel counts the same
            for (auto &k : subset.kernels)
                k.predictedMs = 1;
        input.facts = &subset;
        input.kernel = -1;
        RubricScore s = dim->evaluate(input);
        if (!weighted) {
            for (std::string *text : {&s.evidence, &s.sentence})
                for (std::size_t at; (at = text->find(" of the predicted time")) != std::string::npos;)
                    text->replace(at, 22, " of the kernels, equal weights: not every time is predicted");
            if (s.sentence.rfind("Weighted by predicted time.", 0) == 0)
                s.sentence.replace(0, 27, "Kernels weighted equally.");
        }
        report.hardViolation = report.hardViolation || s.hardViolation;
        report.program.push_back(std::move(s));
    }
    report.scoringMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return report;
}

Result<AsWrittenReport> scoreAsWritten(const std::string &source, const std::string &fileName,
                                       const AsWrittenOptions &options)
{
    const auto start = std::chrono::steady_clock::now();
    auto detail = fl::liftCudaProgramDetailed(source, fileName, {}, options.source);
    if (!detail.ok())
        return detail.error();
    const double liftMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    auto report = scoreAsWritten(*detail, fileName, options);
    if (report.ok())
        report->scoringMs += liftMs;
    return report;
}

Result<AsWrittenReport> scoreAsWritten(const fl::CudaLiftDetail &detail, const std::string &fileName,
                                       const AsWrittenOptions &options)
{
    std::optional<cuda::CompileResult> compiled;
    std::string note;
    double compileMs = 0;
    if (options.compile) {
        const auto c0 = std::chrono::steady_clock::now();
        // The lifted text: includes inlined, conditionals and -D applied, so NVRTC needs no paths.
        auto c = compileSourceAsWritten(detail.source, fileName, detail, options);
        compileMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - c0).count();
        if (c.ok())
            compiled = std::move(*c);
        else
            note = "NVRTC failed: " + c.error().message +
                   (c.error().location ? " at " + c.error().location->file + ":" +
                                             std::to_string(c.error().location->line) + ":" +
                                             std::to_string(c.error().location->column)
                                       : std::string());
    } else {
        note = "--no-compile";
    }
    auto report = scoreAsWritten(detail, fileName, compiled ? &*compiled : nullptr, options, note);
    if (!report.ok())
        return report;
    report->compileMs = compileMs;
    return report;
}

} // namespace stitch::rubric
