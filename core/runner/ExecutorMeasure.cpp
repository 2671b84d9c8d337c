// Executor: timing (warm-up, L2 flush, median of repeats), the kernel trace and CUPTI metrics of a
// prepared program.
#include "core/runner/ExecutorProgram.h"

#include "core/cuda/NvrtcCompiler.h"
#include "core/runner/KernelTracer.h"
#include "core/runner/MetricProfiler.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <thread>

namespace stitch::runner {

namespace {

constexpr std::uint64_t kMinFlushBytes = std::uint64_t{8} << 20;
constexpr double kSettledWarmupMs = 20.0;

} // namespace

Result<Timing> Executor::time(Program &p, const MeasureOptions &options)
{
    Timing t;
    t.warmup = options.warmup;
    t.repeats = options.repeats;
    if (options.flushL2) {
        const std::uint64_t want = std::max<std::uint64_t>(2 * m_device.l2CacheBytes, kMinFlushBytes);
        if (!m_flush || m_flush->bytes() < want) {
            m_flush.reset();
            auto flush = L2Flush::create(m_context, want, m_device.multiprocessors);
            if (!flush)
                return flush.error();
            m_flush = std::move(*flush);
        }
        t.l2FlushBytes = m_flush->bytes();
    }
    if (options.settleMs > 0) {
        if (auto st = m_stream->synchronize(); !st)
            return annotate(st.error(), "settle");
        std::this_thread::sleep_for(std::chrono::milliseconds(options.settleMs));
    }
    // After a settle the GPU idles at low clocks (345 MHz on the H200 of run 21) and takes
    // milliseconds of work to ramp up: the warm-up then lasts kSettledWarmupMs at least (run 21: a
    // 0.15 ms layer norm timed after 3 warm-up runs measured 1.2% slower than without the settle).
    int warmup = options.warmup;
    if (options.settleMs > 0 && p.firstRunMs > 0)
        warmup = std::max(warmup, static_cast<int>(std::min(10000.0, std::ceil(kSettledWarmupMs / p.firstRunMs))));
    for (int w = 0; w < warmup; ++w)
        if (auto st = enqueueAll(p); !st)
            return annotate(st.error(), "warm-up");
    if (auto st = m_stream->synchronize(); !st)
        return annotate(st.error(), "warm-up");

    auto start = m_context.createEvent();
    auto stop = m_context.createEvent();
    if (!start || !stop)
        return !start ? start.error() : stop.error();
    t.samplesMs.reserve(static_cast<std::size_t>(options.repeats));
    for (int r = 0; r < options.repeats; ++r) {
        // The flush (a read of twice L2: clean lines, L2Flush.h) is queued before the start event,
        // so it is not timed.
        if (m_flush && options.flushL2)
            if (auto st = m_flush->enqueue(*m_stream); !st)
                return annotate(st.error(), "L2 flush");
        if (auto st = (*start)->record(*m_stream); !st)
            return st.error();
        if (auto st = enqueueAll(p); !st)
            return annotate(st.error(), "timed run " + std::to_string(r + 1));
        if (auto st = (*stop)->record(*m_stream); !st)
            return st.error();
        if (auto st = (*stop)->synchronize(); !st)
            return annotate(st.error(), "timed run " + std::to_string(r + 1));
        auto ms = cuda::Event::elapsedMs(**start, **stop);
        if (!ms)
            return ms.error();
        t.samplesMs.push_back(*ms);
    }
    std::vector<double> sorted = t.samplesMs;
    std::sort(sorted.begin(), sorted.end());
    const std::size_t n = sorted.size();
    t.medianMs = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
    t.minMs = sorted.front();
    t.maxMs = sorted.back();
    t.meanMs = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(n);
    return t;
}

Profile Executor::profile(Program &p)
{
    Profile prof;
    if (!m_tracer) {
        prof.message = "profiling is not available in this process";
        return prof;
    }
    if (auto st = m_tracer->start(); !st) {
        prof.message = st.error().message + "; timing only";
        return prof;
    }
    Status run = enqueueAll(p);
    if (run)
        run = m_stream->synchronize();
    auto kernels = m_tracer->stop();
    if (!run) {
        prof.message = "the traced run failed: " + run.error().message;
        return prof;
    }
    if (!kernels) {
        prof.message = kernels.error().message + "; timing only";
        return prof;
    }
    prof.available = true;
    prof.kernels = std::move(*kernels);
    // A library call launches kernels of its own (CUPTI records them too, under the library's names).
    const auto calls = static_cast<std::size_t>(std::count_if(p.plan->launches.begin(), p.plan->launches.end(),
                                                              [](const KernelLaunch &l) { return l.isLibraryCall(); }));
    const std::size_t launches = p.plan->launches.size() - calls;
    if (calls)
        prof.message = "CUPTI reported " + std::to_string(prof.kernels.size()) + " kernels for " +
                       std::to_string(launches) + " kernel launches and " + std::to_string(calls) +
                       " library calls (whose kernels are the library's)";
    else if (prof.kernels.size() != launches)
        prof.message = "CUPTI reported " + std::to_string(prof.kernels.size()) + " kernels for " +
                       std::to_string(launches) + " launches";
    return prof;
}

MetricsReport Executor::metrics(Program &p, const MeasureOptions &options)
{
    MetricsReport report;
    if (!m_metrics) {
        report.message = "hardware metrics are not available in this process; timing only";
        return report;
    }
    const std::size_t launches = p.plan->launches.size();
    std::vector<std::string> launchKernels;
    for (const auto &l : p.plan->launches)
        launchKernels.push_back(l.kernel);
    MetricProfiler::Request request;
    request.deviceOrdinal = m_device.ordinal;
    request.launches = launches;
    // A library call's kernel name is empty: never chosen, so its kernels run outside the profiler's
    // windows (they are the library's, and would take ranges meant for the plan's launches).
    request.profiled = profiledLaunches(launchKernels, options.metricsKernels);
    if (request.profiled.empty()) {
        report.message = p.plan->hasKernelLaunches()
                             ? "no launch runs a chosen kernel: nothing profiled"
                             : "the program only calls libraries, whose kernels are not profiled: "
                               "nothing profiled";
        return report;
    }
    // The profiled run uses its own copy of the module, loaded while range profiling is enabled:
    // CUPTI instruments code for the SASS-level metrics (smsp__sass_*) as it is loaded.
    std::unique_ptr<cuda::Module> fresh;
    std::vector<cuda::KernelHandle> kernels;
    auto prepare = [&]() -> Status {
        auto mod = m_context.loadModule(*p.image);
        if (!mod)
            return mod.error();
        fresh = std::move(*mod);
        for (const auto &l : p.plan->launches) {
            if (l.library) {
                kernels.emplace_back();
                continue;
            }
            auto k = fresh->kernel(l.kernel);
            if (!k)
                return k.error();
            kernels.push_back(*k);
        }
        return Ok{};
    };
    auto launch = [&](std::size_t i) {
        if (p.plan->launches[i].library)
            return enqueue(p, i);
        return fresh->enqueue(kernels[i], p.plan->launches[i].config, p.argv[i].data(), m_stream.get());
    };
    auto wait = [&] { return m_stream->synchronize(); };
    auto ranges = m_metrics->profile(request, prepare, launch, wait);
    if (!ranges) {
        // CUPTI refusing is "no metrics here"; a kernel failing under replay is the job's problem too.
        if (ranges.error().kind != ErrorKind::Unsupported)
            noteFailure(ranges.error());
        report.message = ranges.error().message + "; timing only";
        return report;
    }
    report.available = true;
    report.chip = ranges->chip;
    report.passes = ranges->passes;
    report.dropped = ranges->dropped;
    std::vector<std::string> notes;
    if (!report.dropped.empty()) {
        std::string list;
        for (const auto &d : report.dropped)
            list += (list.empty() ? "" : ", ") + d;
        notes.push_back("not available on " + report.chip + ": " + list);
    }
    if (ranges->rangesDropped)
        notes.push_back("CUPTI dropped " + std::to_string(ranges->rangesDropped) + " ranges");
    const std::vector<std::size_t> profiled = launchIndices(request.profiled);
    if (ranges->ranges.size() != profiled.size())
        notes.push_back("CUPTI reported " + std::to_string(ranges->ranges.size()) + " ranges for " +
                        std::to_string(profiled.size()) + " launches");
    if (p.plan->hasLibraryCalls())
        notes.push_back("library calls not profiled");
    // Automatic ranges follow execution order, and the launches run in order on one stream.
    for (std::size_t r = 0; r < std::min(profiled.size(), ranges->ranges.size()); ++r) {
        KernelMetrics k;
        k.mangledName = p.plan->launches[profiled[r]].kernel;
        k.name = cuda::shortKernelName(k.mangledName);
        k.launch = static_cast<int>(profiled[r]);
        k.range = std::move(ranges->ranges[r].name);
        k.values = std::move(ranges->ranges[r].values);
        k.derived = deriveMetrics(k.values);
        report.kernels.push_back(std::move(k));
    }
    const auto kernelLaunches = static_cast<std::size_t>(std::count_if(
        p.plan->launches.begin(), p.plan->launches.end(), [](const KernelLaunch &l) { return !l.isLibraryCall(); }));
    if (profiled.size() < kernelLaunches)
        notes.push_back(std::to_string(kernelLaunches - profiled.size()) + " launches of kernels not chosen left out");
    for (const auto &n : notes)
        report.message += (report.message.empty() ? "" : "; ") + n;
    return report;
}

} // namespace stitch::runner
