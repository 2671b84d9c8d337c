#include "core/rubric/Calibration.h"

#include "core/rubric/Dimensions.h"
#include "core/storage/TextFile.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <map>
#include <numeric>
#include <ostream>
#include <sstream>

namespace stitch::rubric {

namespace {

const std::vector<std::string> kFixedColumns = {"case", "shape", "candidate", "measured_ms", "predicted_ms", "schedule"};
std::string number(double v)
{
    std::ostringstream s;
    s.precision(6);
    s << v;
    return s.str();
}

/// What a fact column is computed from: the slowest kernel's facts and prediction.
struct FactSource {
    const ProgramFacts &facts;
    const ProgramPrediction &prediction;
    const KernelFacts &k;
    const KernelPrediction &p;
    PtxMix loop; ///< the issue mix of the FMA-heaviest loop (zeros: none, or not compiled)
};

/// The fact columns of a calibration file, in order: the header and every row come from this one
/// list.
struct FactColumn {
    const char *name;
    std::string (*value)(const FactSource &);
};
const FactColumn kFactColumns[] = {
    {"kernels", [](const FactSource &s) { return std::to_string(s.facts.kernels.size()); }},
    {"main_kernel", [](const FactSource &s) { return s.k.name; }},
    {"blocks", [](const FactSource &s) { return std::to_string(s.k.blocks); }},
    {"threads", [](const FactSource &s) { return std::to_string(s.k.threads); }},
    {"cluster", [](const FactSource &s) { return std::to_string(s.k.clusterSize); }},
    {"registers", [](const FactSource &s) { return std::to_string(s.k.registers); }},
    {"shared_bytes", [](const FactSource &s) { return std::to_string(s.k.sharedBytesTotal()); }},
    {"blocks_per_sm",
     [](const FactSource &s) { return std::to_string(s.k.occupancy ? s.k.occupancy->activeBlocksPerSm : 0); }},
    {"ptx_instructions", [](const FactSource &s) { return std::to_string(s.k.ptxMix.total); }},
    {"flops", [](const FactSource &s) { return number(s.k.flops); }},
    {"unique_bytes", [](const FactSource &s) { return number(s.k.uniqueBytes); }},
    {"traffic_bytes", [](const FactSource &s) { return number(s.k.trafficBytes); }},
    {"shared_traffic_bytes", [](const FactSource &s) { return number(s.k.sharedTrafficBytes); }},
    {"bytes_in_flight", [](const FactSource &s) { return number(s.k.bytesInFlightPerThread); }},
    {"ilp", [](const FactSource &s) { return number(s.k.ilp); }},
    {"fma_share", [](const FactSource &s) { return number(s.k.fmaShare); }},
    {"compute_ms", [](const FactSource &s) { return number(s.p.computeMs); }},
    {"dram_ms", [](const FactSource &s) { return number(s.p.dramMs); }},
    {"l2_ms", [](const FactSource &s) { return number(s.p.l2Ms); }},
    {"shared_ms", [](const FactSource &s) { return number(s.p.sharedMs); }},
    {"issue_ms", [](const FactSource &s) { return number(s.p.issueMs); }},
    // A short-lived block's latency limit or a GEMM's k-loop chain: a kernel has one or the other.
    {"latency_ms", [](const FactSource &s) { return number(s.p.latencyMs + s.p.loopLatencyMs); }},
    {"bound", [](const FactSource &s) { return s.p.bound; }},
    {"loop_instructions", [](const FactSource &s) { return std::to_string(s.loop.total); }},
    {"loop_fma", [](const FactSource &s) { return std::to_string(s.loop.fma); }},
    {"loop_shared_loads", [](const FactSource &s) { return std::to_string(s.loop.sharedLoads); }},
    {"other_kernels_ms", [](const FactSource &s) { return number(s.prediction.ms - s.p.ms); }},
    {"spill_bytes", [](const FactSource &s) { return std::to_string(s.k.spillBytes); }},
    {"loop_iterations", [](const FactSource &s) { return number(s.k.loopIterations); }},
    {"epilogue_ms", [](const FactSource &s) { return number(s.p.epilogueMs); }},
    // The hot loop and the kernel in the machine code (cuda::scanSass; zeros when not scanned).
    {"sass_loop_instructions", [](const FactSource &s) { return std::to_string(s.k.sassLoop.instructions); }},
    {"sass_loop_ffma", [](const FactSource &s) { return std::to_string(s.k.sassLoop.ffma); }},
    {"sass_loop_shared_loads", [](const FactSource &s) { return std::to_string(s.k.sassLoop.sharedLoads); }},
    {"sass_loop_local",
     [](const FactSource &s) { return std::to_string(s.k.sassLoop.localLoads + s.k.sassLoop.localStores); }},
    {"sass_instructions", [](const FactSource &s) { return std::to_string(s.k.sassKernel.instructions); }},
    {"sass_local",
     [](const FactSource &s) { return std::to_string(s.k.sassKernel.localLoads + s.k.sassKernel.localStores); }},
    {"sass_loop_moves", [](const FactSource &s) { return std::to_string(s.k.sassLoop.moves); }},
    {"sass_loop_moved_accumulators", [](const FactSource &s) { return std::to_string(s.k.sassLoop.movedAccumulators); }},
    {"sass_loop_bank_conflicts", [](const FactSource &s) { return std::to_string(s.k.sassLoop.bankConflicts); }},
    {"sass_loop_stall_cycles", [](const FactSource &s) { return std::to_string(s.k.sassLoop.stallCycles); }},
    // The hot loop's issue replayed (IssueReplay) for the warps one scheduler holds at the kernel's
    // resident blocks per SM.
    {"sass_replay_warps", [](const FactSource &s) { return std::to_string(s.k.sassReplayWarps); }},
    {"sass_trip_cycles", [](const FactSource &s) { return number(s.k.sassReplay.cyclesPerTrip); }},
    {"sass_warp_cpi", [](const FactSource &s) { return number(s.k.sassReplay.warpCyclesPerIssue); }},
    {"sass_fetch_idle_cycles", [](const FactSource &s) { return number(s.k.sassReplay.fetchIdleCyclesPerTrip); }},
};

} // namespace

namespace detail {

std::string csvQuoted(const std::string &text)
{
    std::string out = "\"";
    for (char c : text)
        out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

std::vector<std::string> splitCsvRecord(const std::string &line)
{
    std::vector<std::string> out(1);
    bool inQuotes = false;
    for (std::size_t i = 0; i < line.size(); ++i) {
        const char c = line[i];
        if (inQuotes) {
            if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
                out.back() += '"';
                ++i;
            } else if (c == '"') {
                inQuotes = false;
            } else {
                out.back() += c;
            }
        } else if (c == '"') {
            inQuotes = true;
        } else if (c == ',') {
            out.emplace_back();
        } else if (c != '\r') {
            out.back() += c;
        }
    }
    return out;
}

} // namespace detail

namespace {

using detail::splitCsvRecord;

std::string quoted(const std::string &text)
{
    return detail::csvQuoted(text);
}

std::vector<std::string> splitCsv(const std::string &line)
{
    return splitCsvRecord(line);
}

std::vector<double> ranks(const std::vector<double> &v)
{
    std::vector<std::size_t> order(v.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return v[a] < v[b]; });
    std::vector<double> out(v.size());
    for (std::size_t i = 0; i < order.size();) {
        std::size_t j = i;
        while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]])
            ++j;
        for (std::size_t k = i; k <= j; ++k)
            out[order[k]] = (static_cast<double>(i + j) / 2.0) + 1.0;
        i = j + 1;
    }
    return out;
}

} // namespace

std::vector<std::pair<std::string, std::string>> calibrationFacts(const ProgramFacts &facts,
                                                                  const ProgramPrediction &prediction)
{
    std::size_t main = 0;
    for (std::size_t i = 1; i < prediction.kernels.size(); ++i)
        if (prediction.kernels[i].ms > prediction.kernels[main].ms)
            main = i;
    if (facts.kernels.empty() || main >= facts.kernels.size())
        return {};
    const KernelFacts &k = facts.kernels[main];
    const FactSource source{facts, prediction, k, prediction.kernels[main], k.ptxLoop};
    std::vector<std::pair<std::string, std::string>> out;
    for (const FactColumn &c : kFactColumns)
        out.emplace_back(c.name, c.value(source));
    return out;
}

void writeCalibrationHeader(std::ostream &out)
{
    for (std::size_t i = 0; i < kFixedColumns.size(); ++i)
        out << (i ? "," : "") << kFixedColumns[i];
    for (const FactColumn &c : kFactColumns)
        out << "," << c.name;
    out << "\n";
}

void writeCalibrationRow(std::ostream &out, const CalibrationRow &row)
{
    out << row.family << "," << row.shape << "," << row.candidate << "," << number(row.measuredMs) << ","
        << number(row.predictedMs) << "," << quoted(row.schedule);
    for (const auto &[key, value] : row.facts)
        out << "," << quoted(value);
    out << "\n";
    out.flush();
}

Result<std::vector<CalibrationRow>> readCalibration(const std::string &path)
{
    auto text = readTextFile(path); // plain or NAME.csv.gz
    if (!text.ok())
        return Error{text.error().kind, text.error().message + " (the calibration file)", SourceLocation{path, 0, 0}, {}};
    std::istringstream in(std::move(*text));
    auto fail = [&](int lineNo, const std::string &what) {
        return Error{ErrorKind::Parse, what, SourceLocation{path, lineNo, 1}, {}};
    };
    std::string line;
    if (!std::getline(in, line))
        return fail(1, "empty file, expected the header case,shape,candidate,...");
    const auto header = splitCsv(line);
    for (std::size_t i = 0; i < kFixedColumns.size(); ++i)
        if (i >= header.size() || header[i] != kFixedColumns[i])
            return fail(1, "column " + std::to_string(i + 1) + " must be '" + kFixedColumns[i] + "'");
    std::vector<CalibrationRow> rows;
    int lineNo = 1;
    while (std::getline(in, line)) {
        ++lineNo;
        if (line.empty())
            continue;
        const auto cells = splitCsv(line);
        if (cells.size() < kFixedColumns.size())
            return fail(lineNo, std::to_string(cells.size()) + " columns, expected at least " +
                                    std::to_string(kFixedColumns.size()));
        CalibrationRow r;
        r.family = cells[0];
        r.shape = cells[1];
        try {
            r.candidate = std::stoi(cells[2]);
            r.measuredMs = std::stod(cells[3]);
            r.predictedMs = std::stod(cells[4]);
        } catch (const std::exception &) {
            return fail(lineNo, "candidate, measured_ms and predicted_ms must be numbers");
        }
        r.schedule = cells[5];
        for (std::size_t i = kFixedColumns.size(); i < cells.size() && i < header.size(); ++i)
            r.facts.emplace_back(header[i], cells[i]);
        rows.push_back(std::move(r));
    }
    return rows;
}

double spearman(const std::vector<double> &xs, const std::vector<double> &ys)
{
    if (xs.size() != ys.size() || xs.size() < 3)
        return std::nan("");
    const auto rx = ranks(xs), ry = ranks(ys);
    const double n = static_cast<double>(rx.size());
    const double mx = std::accumulate(rx.begin(), rx.end(), 0.0) / n;
    const double my = std::accumulate(ry.begin(), ry.end(), 0.0) / n;
    double cov = 0, vx = 0, vy = 0;
    for (std::size_t i = 0; i < rx.size(); ++i) {
        cov += (rx[i] - mx) * (ry[i] - my);
        vx += (rx[i] - mx) * (rx[i] - mx);
        vy += (ry[i] - my) * (ry[i] - my);
    }
    return vx > 0 && vy > 0 ? cov / std::sqrt(vx * vy) : std::nan("");
}

std::vector<CalibrationSummary> summarizeCalibration(const std::vector<CalibrationRow> &rows)
{
    struct Series {
        std::vector<double> predicted, measured;
    };
    // [0]: every candidate, [1]: even indices, [2]: odd ones
    std::map<std::pair<std::string, std::string>, std::array<Series, 3>> groups;
    for (const auto &r : rows)
        if (r.predictedMs > 0) {
            auto &g = groups[{r.family, r.shape}];
            for (Series *s : {&g[0], &g[r.candidate % 2 == 0 ? 1 : 2]}) {
                s->predicted.push_back(r.predictedMs);
                s->measured.push_back(r.measuredMs);
            }
        }
    std::vector<CalibrationSummary> out;
    for (const auto &[key, series] : groups)
        out.push_back({key.first, key.second, static_cast<int>(series[0].predicted.size()),
                       spearman(series[0].predicted, series[0].measured), spearman(series[1].predicted, series[1].measured),
                       spearman(series[2].predicted, series[2].measured)});
    return out;
}

std::string decisionValue(const std::string &schedule, const std::string &key)
{
    const std::string needle = key + "=";
    for (std::size_t at = schedule.find(needle); at != std::string::npos; at = schedule.find(needle, at + 1)) {
        if (at > 0 && schedule[at - 1] != ' ')
            continue; // the tail of a longer key ("thread_m" in "block_thread_m")
        const std::size_t begin = at + needle.size();
        return schedule.substr(begin, schedule.find_first_of(" ;", begin) - begin);
    }
    return {};
}

namespace {

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

} // namespace

std::vector<ResidualGroup> groupResiduals(const std::vector<CalibrationRow> &rows, const std::vector<std::string> &keys)
{
    std::map<std::pair<std::string, std::string>, std::map<std::string, std::vector<double>>> problems;
    for (const auto &r : rows) {
        if (r.predictedMs <= 0 || r.measuredMs <= 0)
            continue;
        std::string values;
        for (const auto &key : keys) {
            std::string v = decisionValue(r.schedule, key);
            for (const auto &[name, fact] : r.facts)
                if (v.empty() && name == key)
                    v = fact;
            values += (values.empty() ? "" : " ") + key + "=" + (v.empty() ? "-" : v);
        }
        problems[{r.family, r.shape}][values].push_back(std::log(r.predictedMs / r.measuredMs));
    }
    std::vector<ResidualGroup> out;
    for (const auto &[problem, groups] : problems) {
        std::vector<double> all;
        for (const auto &[values, residuals] : groups)
            all.insert(all.end(), residuals.begin(), residuals.end());
        const double center = median(all);
        for (const auto &[values, residuals] : groups) {
            const double mean = std::accumulate(residuals.begin(), residuals.end(), 0.0) / residuals.size();
            double squares = 0;
            for (const double x : residuals)
                squares += (x - mean) * (x - mean);
            out.push_back({problem.first, problem.second, values, static_cast<int>(residuals.size()),
                           median(residuals) - center, std::sqrt(squares / residuals.size())});
        }
    }
    return out;
}

} // namespace stitch::rubric
