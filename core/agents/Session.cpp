#include "core/agents/Session.h"

#include "core/agents/Checkpoints.h"
#include "core/arch/ArchDatabase.h"
#include "core/frontend/cudalift/CudaLift.h"
#include "core/rubric/AsWrittenRubric.h"

namespace stitch::agents {

TraceStage parseStage(const frontend::LiftedProgram &lifted, const ir::SizeBindings &sizes)
{
    TraceStage s;
    s.agent = AgentKind::Parse;
    const auto &g = lifted.graph;
    s.summary = "lifted " + std::to_string(g.ops().size()) + " op" + (g.ops().size() == 1 ? "" : "s") + " from " +
                lifted.language;
    std::size_t inferred = 0;
    for (const auto &l : lifted.launches)
        inferred += l.inferred ? 1 : 0;
    if (!lifted.launches.empty())
        s.summary += " (" + std::to_string(lifted.launches.size()) + " launch" +
                     (lifted.launches.size() == 1 ? "" : "es") +
                     (inferred == 0 ? std::string()
                                    : ", " + std::to_string(inferred) + " inferred from the kernel's own thread mapping") +
                     ")";
    std::string text;
    for (const auto &[n, v] : sizes)
        text += (text.empty() ? "" : " ") + n + "=" + std::to_string(v);
    if (!text.empty())
        s.summary += ", sizes " + text;
    for (const auto &op : g.ops())
        s.notes.push_back(op.name + ": " + op.output.name);
    for (const auto &o : lifted.opaque)
        s.notes.push_back("opaque kernel " + o.name + ": " + o.why.toString());
    return s;
}

void recordCarried(Trace &trace, const Result<codegen::CarriedKernels> &carried)
{
    if (!carried) {
        trace.keptInput = true;
        trace.integrate.notes.push_back("kept the input as written: " + carried.error().toString());
        return;
    }
    for (const auto &c : carried->launches)
        trace.integrate.notes.push_back("carried unchanged: " + c.kernel + " (" + c.where.toString() + "), " + c.why);
    for (const auto &n : carried->notes)
        trace.integrate.notes.push_back(n.message);
}

void SourceOptimizer::cancel()
{
    std::lock_guard lock(m_mutex);
    m_cancelled = true;
    if (m_running)
        m_running->cancel();
}

Result<SourceResult> SourceOptimizer::run(const SourceRequest &request,
                                          const std::function<void(const OptimizeProgress &)> &progress)
{
    // A cancel() that came before this run started applies to it; the flag is cleared when it ends.
    struct Reset {
        std::atomic<bool> &flag;
        ~Reset() { flag = false; }
    } reset{m_cancelled};
    SourceResult out;
    // A .cu is lifted with its host-side plan: the opaque kernels are carried from it.
    auto file = frontend::cudalift::liftFileDetailed(request.text, request.fileName, request.source);
    if (!file)
        return file.error();
    out.lifted = std::move(file->program);
    std::optional<frontend::cudalift::CudaLiftDetail> detail = std::move(file->detail);
    if (out.lifted.graph.ops().empty()) {
        std::string why;
        for (const auto &o : out.lifted.opaque)
            why += "\n  " + o.why.toString();
        return makeError(ErrorKind::InvalidArgument,
                         request.fileName + ": nothing to optimize: no kernel could be lifted" + why);
    }
    out.sizes = out.lifted.sizes;
    for (const auto &[n, v] : request.sizes)
        out.sizes[n] = v;
    for (const auto &name : out.lifted.graph.sizeVars())
        if (!out.sizes.count(name))
            return makeError(ErrorKind::InvalidArgument, "size '" + name + "' has no value; give it one");
    const ArchLimits *arch = ArchDatabase::builtin().arch(request.arch);
    if (!arch)
        return makeError(ErrorKind::InvalidArgument, "unknown architecture '" + request.arch + "'");
    std::unique_ptr<PolicySource> policy;
    auto loaded = loadAgents(request.checkpoint, request.arch);
    if (loaded) {
        policy = std::make_unique<NetworkPolicy>(*loaded->networks, "agents (" + loaded->path + ")");
        out.policy = "agents " + loaded->note;
    } else if (request.checkpoint.empty() && loaded.error().kind == ErrorKind::Io) {
        policy = std::make_unique<HeuristicPolicy>();
        out.policy = "the heuristics (" + loaded.error().message + ")";
    } else {
        return loaded.error();
    }
    const schedule::Problem problem{out.lifted.graph, out.sizes, *arch,
                                    request.tf32 ? schedule::Precision::TF32 : schedule::Precision::FP32};
    rubric::Rubric rubric;
    rubric::CompileCache cache;
    Evaluator evaluator(rubric, &cache);
    Optimizer optimizer(problem, evaluator, *policy, request.options);
    if (auto started = optimizer.start(parseStage(out.lifted, out.sizes)); !started)
        return started.error();
    // After start (which clears the optimizer's own flag), so a cancel() from now on reaches it.
    {
        std::lock_guard lock(m_mutex);
        m_running = &optimizer;
        if (m_cancelled)
            optimizer.cancel();
    }
    auto trace = optimizer.finish(progress);
    {
        std::lock_guard lock(m_mutex);
        m_running = nullptr;
    }
    if (!trace)
        return trace.error();
    out.trace = std::move(*trace);
    out.trace.source = request.fileName;
    // The text lifted when includes or -D changed it: a replay needs neither the headers nor the options.
    out.trace.sourceText = out.lifted.expandedSource.empty() ? request.text : out.lifted.expandedSource;
    if (request.weighAsWritten && detail) {
        rubric::AsWrittenOptions o;
        o.arch = request.arch;
        o.sizes = out.sizes;
        if (auto asWritten = rubric::scoreAsWritten(*detail, request.fileName, o);
            asWritten.ok() && asWritten->predictedMs)
            weighAsWritten(out.trace, *asWritten->predictedMs, "by the model");
    }
    for (const auto &[n, v] : out.sizes)
        out.trace.sizes[n] = v;
    Result<codegen::CarriedKernels> carried = codegen::CarriedKernels{};
    if (detail)
        carried = codegen::carryOpaqueKernels(*detail, request.fileName, out.sizes);
    recordCarried(out.trace, carried);
    if (carried)
        out.carried = *carried;
    auto program = codegen::generateProgram(problem, out.trace.schedule, &out.carried);
    if (!program)
        return program.error();
    out.program = std::move(*program);
    return out;
}

} // namespace stitch::agents
