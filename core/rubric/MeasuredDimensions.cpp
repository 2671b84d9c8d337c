// The static dimensions' formulas on measured quantities, the per-kernel CSV and the agreement table.
//   KernelFacts + metric values -> compareWithMetrics -> DimensionComparison (static | measured)
// Each measured score calls the dimension's own formula (Dimensions.h); where the static quantity is
// a ratio against an ideal that only the static analysis knows (ideal sectors or wavefronts per
// request), the ideal per request comes from the static streams and the requests from the counters.
#include "core/rubric/MeasuredDimensions.h"

#include "core/rubric/Calibration.h"
#include "core/rubric/Dimensions.h"
#include "core/storage/TextFile.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <ostream>
#include <sstream>

namespace stitch::rubric {

namespace {

constexpr double kNone = DimensionComparison::kNone;

/// A metric value, or nothing when absent or NaN.
std::optional<double> value(const std::map<std::string, double> &values, const char *name)
{
    auto it = values.find(name);
    if (it == values.end() || std::isnan(it->second))
        return std::nullopt;
    return it->second;
}

DimensionComparison notComparable(std::string dimension, std::string quantity, double staticScore, double staticValue,
                                  std::string why)
{
    DimensionComparison c;
    c.dimension = std::move(dimension);
    c.quantity = std::move(quantity);
    c.staticScore = staticScore;
    c.staticValue = staticValue;
    c.note = std::move(why);
    return c;
}

DimensionComparison compared(std::string dimension, std::string quantity, double staticScore, double measuredScore,
                             double staticValue, double measuredValue, std::string note = {})
{
    DimensionComparison c;
    c.dimension = std::move(dimension);
    c.quantity = std::move(quantity);
    c.comparable = true;
    c.staticScore = roundScore(staticScore);
    c.measuredScore = roundScore(measuredScore);
    c.staticValue = staticValue;
    c.measuredValue = measuredValue;
    c.note = std::move(note);
    return c;
}

std::string missing(const char *name)
{
    return std::string("metric ") + name + " not collected";
}

std::string number(double v)
{
    if (std::isnan(v))
        return "";
    std::ostringstream s;
    s.precision(6);
    s << v;
    return s.str();
}

// --- coalescing -------------------------------------------------------------------------------------
// Static: sum(ideal x requests) / sum(sectors x requests) over the global streams. Measured: the
// l1tex sectors of global loads and stores; the ideal is the static streams' ideal sectors per
// request (loads and stores apart) times the measured requests.
DimensionComparison coalescing(const KernelFacts &k, const std::map<std::string, double> &v)
{
    const char *name = "coalescing";
    const char *quantity = "global sectors per request (loads + stores)";
    const SectorTotals t = globalSectorTotals(k);
    const double staticScore = roundScore(coalescingScore(t.ideal(), t.sectors()));
    const double staticValue = t.requests() > 0 ? t.sectors() / t.requests() : 0;
    for (const char *m : {metric::kLoadSectors, metric::kLoadRequests, metric::kStoreSectors, metric::kStoreRequests})
        if (!value(v, m))
            return notComparable(name, quantity, staticScore, staticValue, missing(m));
    const double ldSectors = *value(v, metric::kLoadSectors), ldRequests = *value(v, metric::kLoadRequests);
    const double stSectors = *value(v, metric::kStoreSectors), stRequests = *value(v, metric::kStoreRequests);
    if (ldRequests > 0 && t.loadRequests <= 0)
        return notComparable(name, quantity, staticScore, staticValue,
                             "the kernel made " + number(ldRequests) +
                                 " global load requests; the static analysis has no load stream for their ideal");
    if (stRequests > 0 && t.storeRequests <= 0)
        return notComparable(name, quantity, staticScore, staticValue,
                             "the kernel made " + number(stRequests) +
                                 " global store requests; the static analysis has no store stream for their ideal");
    const double idealLoad = t.loadRequests > 0 ? t.loadIdeal / t.loadRequests : 0;
    const double idealStore = t.storeRequests > 0 ? t.storeIdeal / t.storeRequests : 0;
    const double ideal = idealLoad * ldRequests + idealStore * stRequests;
    const double actual = ldSectors + stSectors;
    const double requests = ldRequests + stRequests;
    return compared(name, quantity, staticScore, coalescingScore(ideal, actual), staticValue,
                    requests > 0 ? actual / requests : 0,
                    "ideal per request from the static streams: loads " + number(idealLoad) + ", stores " +
                        number(idealStore) + "; measured requests: loads " + number(ldRequests) + " (static " +
                        number(t.loadRequests) + "), stores " + number(stRequests) + " (static " +
                        number(t.storeRequests) + ")");
}

// --- bank conflicts ---------------------------------------------------------------------------------
// Static: sum(ideal x requests) / sum(wavefronts x requests) over the shared streams. Measured:
// l1tex shared-load and shared-store wavefronts; the ideal is the static ideal wavefronts per
// request times the measured shared-memory instructions.
std::optional<DimensionComparison> bankConflicts(const KernelFacts &k, const ProgramFacts &p,
                                                 const std::map<std::string, double> &v)
{
    if (!hasSharedStreams(k))
        return std::nullopt; // the dimension does not apply
    const char *name = "bank_conflicts";
    const char *quantity = "shared wavefronts per instruction (loads + stores)";
    const WavefrontTotals t = sharedWavefrontTotals(k, p.arch->sharedMemoryBanks);
    const double staticScore = roundScore(bankConflictScore(t.ideal(), t.wavefronts()));
    const double staticValue = t.requests() > 0 ? t.wavefronts() / t.requests() : 0;
    for (const char *m : {metric::kSharedLoadWavefronts, metric::kSharedLoadInstructions})
        if (!value(v, m))
            return notComparable(name, quantity, staticScore, staticValue, missing(m));
    const double ldWavefronts = *value(v, metric::kSharedLoadWavefronts);
    const double ldRequests = *value(v, metric::kSharedLoadInstructions);
    if (ldRequests > 0 && t.loadRequests <= 0)
        return notComparable(name, quantity, staticScore, staticValue,
                             "the kernel executed " + number(ldRequests) +
                                 " shared loads; the static analysis has no shared load stream for their ideal");
    const double idealLoad = t.loadRequests > 0 ? t.loadIdeal / t.loadRequests : 0;
    const double idealStore = t.storeRequests > 0 ? t.storeIdeal / t.storeRequests : 0;
    double ideal = idealLoad * ldRequests, actual = ldWavefronts, requests = ldRequests;
    std::string note = "ideal per instruction from the static streams: loads " + number(idealLoad) + ", stores " +
                       number(idealStore) + "; measured shared loads " + number(ldRequests) + " (static " +
                       number(t.loadRequests) + ")";
    const auto stWavefronts = value(v, metric::kSharedStoreWavefronts);
    const auto stRequests = value(v, metric::kSharedStoreInstructions);
    if (stWavefronts && stRequests) {
        if (*stRequests > 0 && t.storeRequests <= 0)
            return notComparable(name, quantity, staticScore, staticValue,
                                 "the kernel executed " + number(*stRequests) +
                                     " shared stores; the static analysis has no shared store stream for their ideal");
        ideal += idealStore * *stRequests;
        actual += *stWavefronts;
        requests += *stRequests;
        note += ", stores " + number(*stRequests) + " (static " + number(t.storeRequests) + ")";
    } else if (t.storeRequests > 0) {
        // Without store wavefronts: the static stores' ideal plus the measured store conflicts.
        const auto conflicts = value(v, metric::kSharedStoreConflicts);
        if (!conflicts)
            return notComparable(name, quantity, staticScore, staticValue, missing(metric::kSharedStoreWavefronts));
        ideal += t.storeIdeal;
        actual += t.storeIdeal + *conflicts;
        requests += t.storeRequests;
        note += "; stores: static instructions, ideal wavefronts + measured conflicts (" + number(*conflicts) + ")";
    }
    return compared(name, quantity, staticScore, bankConflictScore(ideal, actual), staticValue,
                    requests > 0 ? actual / requests : 0, note);
}

// --- divergence -------------------------------------------------------------------------------------
// Static: useful lanes / launched lanes. Measured: active lanes per executed warp instruction
// (thread instructions / 32 x warp instructions, Nsight Compute's warp execution efficiency);
// second view: branch efficiency (branches whose active lanes all took one target).
std::vector<DimensionComparison> divergence(const KernelFacts &k, const std::map<std::string, double> &v)
{
    std::vector<DimensionComparison> out;
    const double staticScore = roundScore(divergenceScore(k.usefulLaneFraction));
    {
        const char *quantity = "useful lanes / active lanes per warp instruction";
        const auto thread = value(v, metric::kThreadInstructions), warp = value(v, metric::kInstructions);
        if (!thread || !warp)
            out.push_back(notComparable("divergence", quantity, staticScore, k.usefulLaneFraction,
                                        missing(!thread ? metric::kThreadInstructions : metric::kInstructions)));
        else if (*warp <= 0)
            out.push_back(notComparable("divergence", quantity, staticScore, k.usefulLaneFraction,
                                        "no instructions executed"));
        else {
            const double lanes = *thread / (32 * *warp);
            out.push_back(compared("divergence", quantity, staticScore, divergenceScore(lanes), k.usefulLaneFraction,
                                   lanes));
        }
    }
    {
        const char *quantity = "useful lanes / branch efficiency";
        const auto eff = value(v, metric::kBranchEfficiency);
        if (!eff)
            out.push_back(notComparable("divergence:branch_efficiency", quantity, staticScore, k.usefulLaneFraction,
                                        missing(metric::kBranchEfficiency) + " (or no branch executed)"));
        else
            out.push_back(compared("divergence:branch_efficiency", quantity, staticScore, divergenceScore(*eff / 100),
                                   k.usefulLaneFraction, *eff / 100));
    }
    return out;
}

// --- occupancy --------------------------------------------------------------------------------------
// Static: the occupancy the dimension scores (occupancyFigure: the model's expected achieved
// occupancy, else the calculator's theoretical one). Measured: achieved occupancy (warps resident
// per active SM cycle). The theoretical figure is the calculator's on the CUBIN's own registers
// and shared memory (tests/rubric: RubricOccupancy.EqualsTheCalculatorOnCompiledResources).
std::vector<DimensionComparison> occupancy(const KernelFacts &k, const std::map<std::string, double> &v)
{
    std::vector<DimensionComparison> out;
    const char *quantity = "occupancy (warps resident / most an SM holds)";
    if (!k.occupancy) {
        out.push_back(notComparable("occupancy", quantity, 0, kNone, "the kernel cannot launch: " + k.occupancyError));
        return out;
    }
    const double target = occupancyTarget(k);
    const double theoretical = occupancyFigure(k);
    const double staticScore = roundScore(occupancyScore(theoretical, target));
    const std::string note = k.compiled ? std::string() : "registers estimated (not compiled)";
    if (const auto achieved = value(v, metric::kAchievedOccupancy))
        out.push_back(compared("occupancy", quantity, staticScore, occupancyScore(*achieved / 100, target),
                               theoretical, *achieved / 100, note));
    else
        out.push_back(notComparable("occupancy", quantity, staticScore, theoretical, missing(metric::kAchievedOccupancy)));
    return out;
}

// --- instruction mix --------------------------------------------------------------------------------
// Compute-bound kernels: FFMA share of executed instructions and shared loads per FFMA (the static
// side: the PTX's FMA-heaviest loop). The memory-bound formula scores the vectorized share of
// global memory instructions, which no counter of the metric set gives: not comparable.
// Tensor-core kernels: tensor-pipe cycles per issued instruction: the executed MMA instructions
// (sm__inst_executed_pipe_tensor_op_hmma) times the tensor cycles of one (the PTX loop's shape), over
// the executed warp instructions (prologue and epilogue included, as the FFMA share's are). Without
// the tensor counter (data recorded before it was in the metric set) the MMAs are counted statically:
// a GEMM executes every MMA of its padded tiles, so the loop's MMAs per warp and trip x trips x warps.
DimensionComparison tensorMix(const KernelFacts &k, const MixFigures &f, const std::map<std::string, double> &v)
{
    const char *name = "instruction_mix";
    const char *quantity = "tensor-pipe cycles per issued instruction";
    const double staticScore = roundScore(tensorMixScore(f.tensorPerIssue));
    for (const char *m : {metric::kInstructions, metric::kSharedLoadInstructions})
        if (!value(v, m))
            return notComparable(name, quantity, staticScore, f.tensorPerIssue, missing(m));
    const double instructions = *value(v, metric::kInstructions);
    if (instructions <= 0)
        return notComparable(name, quantity, staticScore, f.tensorPerIssue, "no instructions executed");
    // The warps that issue the MMAs: a wgmma kernel's warpgroups (a block may hold other warps), else all.
    const double warps = double(k.blocks) * (k.warpgroupMma ? 4 * k.warpgroups : (k.threads + 31) / 32);
    const auto counted = value(v, metric::kTensorInstructions);
    const bool measuredMmas = counted && *counted > 0;
    const double mmas = measuredMmas ? *counted : f.tensorLoop.mma * k.loopIterations * warps;
    if (mmas <= 0)
        return notComparable(name, quantity, staticScore, f.tensorPerIssue, "no loop trips known for the MMAs");
    const double tensorCycles = mmas * f.tensorCycles / f.tensorLoop.mma;
    const double measured = tensorCycles / instructions;
    return compared(name, quantity, staticScore, tensorMixScore(measured), f.tensorPerIssue, measured,
                    "tensor cycles of " + number(mmas) +
                        (measuredMmas ? " executed MMAs (counted by sm__inst_executed_pipe_tensor_op_hmma)"
                                      : " MMAs from the PTX loop (recorded without a tensor counter)") +
                        "; shared loads per MMA: static " +
                        number(double(f.tensorLoop.sharedLoads) / f.tensorLoop.mma) + " (PTX tensor loop), measured " +
                        number(*value(v, metric::kSharedLoadInstructions) / mmas) + " (executed SASS)");
}

std::optional<DimensionComparison> instructionMix(const KernelFacts &k, const ProgramFacts &p,
                                                  const std::map<std::string, double> &v)
{
    if (k.ptxBody.empty())
        return std::nullopt; // the dimension does not apply (no PTX)
    const char *name = "instruction_mix";
    const MixFigures f = instructionMixFigures(k, p);
    if (!f.computeBound)
        return notComparable(name, "vector share of global memory instructions",
                             roundScore(memoryMixScore(f.vectorShare, f.integerShare)), f.vectorShare,
                             "memory-bound formula: the vectorized share of global memory instructions has no "
                             "counter in the metric set");
    if (f.tensor)
        return tensorMix(k, f, v);
    const char *quantity = "FFMA share of instructions";
    const double staticScore = roundScore(computeMixScore(f.fmaShare, f.ldsPerFma));
    for (const char *m : {metric::kFfmaThreadInstructions, metric::kInstructions, metric::kSharedLoadInstructions})
        if (!value(v, m))
            return notComparable(name, quantity, staticScore, f.fmaShare, missing(m));
    const double ffma = *value(v, metric::kFfmaThreadInstructions) / 32; // warp-instruction equivalents
    const double instructions = *value(v, metric::kInstructions);
    const double lds = *value(v, metric::kSharedLoadInstructions);
    if (instructions <= 0)
        return notComparable(name, quantity, staticScore, f.fmaShare, "no instructions executed");
    const double fmaShare = ffma / instructions;
    const double ldsPerFma = ffma > 0 ? lds / ffma : 0;
    return compared(name, quantity, staticScore, computeMixScore(fmaShare, ldsPerFma), f.fmaShare, fmaShare,
                    "shared loads per FMA: static " + number(f.ldsPerFma) + " (" +
                        (f.hotLoop ? "PTX hot loop" : "PTX body") + "), measured " + number(ldsPerFma) +
                        " (executed SASS)");
}

// --- arithmetic intensity ---------------------------------------------------------------------------
// Static: FLOPs / bytes of the global sectors the streams move. Measured: the same FLOPs (static
// count) over the l1tex global sectors x 32 B; second view: over DRAM bytes read + written.
std::vector<DimensionComparison> intensity(const KernelFacts &k, const ProgramFacts &p,
                                           const std::map<std::string, double> &v)
{
    std::vector<DimensionComparison> out;
    const double ridge = ridgePoint(*p.gpu);
    const double staticIntensity = k.flops / std::max(k.trafficBytes, 1.0);
    const double staticScore = roundScore(intensityScore(staticIntensity, ridge));
    const char *quantity = "FLOP per byte of global sectors";
    {
        const auto ld = value(v, metric::kLoadSectors), st = value(v, metric::kStoreSectors);
        if (!ld || !st)
            out.push_back(notComparable("arithmetic_intensity", quantity, staticScore, staticIntensity,
                                        missing(!ld ? metric::kLoadSectors : metric::kStoreSectors)));
        else {
            const double measured = k.flops / std::max(32 * (*ld + *st), 1.0);
            out.push_back(compared("arithmetic_intensity", quantity, staticScore, intensityScore(measured, ridge),
                                   staticIntensity, measured, "static FLOPs " + number(k.flops)));
        }
    }
    {
        const auto rd = value(v, metric::kDramRead), wr = value(v, metric::kDramWrite);
        if (!rd || !wr)
            out.push_back(notComparable("arithmetic_intensity:dram", "FLOP per byte (static sectors | DRAM)",
                                        staticScore, staticIntensity, missing(!rd ? metric::kDramRead : metric::kDramWrite)));
        else {
            const double measured = k.flops / std::max(*rd + *wr, 1.0);
            out.push_back(compared("arithmetic_intensity:dram", "FLOP per byte (static sectors | DRAM)", staticScore,
                                   intensityScore(measured, ridge), staticIntensity, measured,
                                   "static FLOPs " + number(k.flops) + ", DRAM bytes " + number(*rd + *wr)));
        }
    }
    return out;
}

const std::vector<std::string> kColumns = {"case",          "shape",          "candidate",    "kernel",
                                           "dimension",     "comparable",     "static_score", "measured_score",
                                           "static_value",  "measured_value", "quantity",     "note"};

} // namespace

std::vector<DimensionComparison> compareWithMetrics(const KernelFacts &k, const ProgramFacts &p,
                                                    const std::map<std::string, double> &values)
{
    std::vector<DimensionComparison> out;
    out.push_back(coalescing(k, values));
    if (auto b = bankConflicts(k, p, values))
        out.push_back(std::move(*b));
    for (auto &c : divergence(k, values))
        out.push_back(std::move(c));
    for (auto &c : occupancy(k, values))
        out.push_back(std::move(c));
    if (auto m = instructionMix(k, p, values))
        out.push_back(std::move(*m));
    for (auto &c : intensity(k, p, values))
        out.push_back(std::move(c));
    return out;
}

std::string dimensionsPathFor(const std::string &calibrationPath)
{
    const std::string ext = ".csv";
    if (calibrationPath.size() > ext.size() &&
        calibrationPath.compare(calibrationPath.size() - ext.size(), ext.size(), ext) == 0)
        return calibrationPath.substr(0, calibrationPath.size() - ext.size()) + ".dimensions.csv";
    return calibrationPath + ".dimensions.csv";
}

void writeDimensionHeader(std::ostream &out)
{
    for (std::size_t i = 0; i < kColumns.size(); ++i)
        out << (i ? "," : "") << kColumns[i];
    out << "\n";
}

void writeDimensionRow(std::ostream &out, const DimensionRow &row)
{
    const DimensionComparison &c = row.comparison;
    out << row.family << "," << row.shape << "," << row.candidate << "," << detail::csvQuoted(row.kernel) << ","
        << c.dimension << "," << (c.comparable ? 1 : 0) << "," << number(c.staticScore) << ","
        << number(c.measuredScore) << "," << number(c.staticValue) << "," << number(c.measuredValue) << ","
        << detail::csvQuoted(c.quantity) << "," << detail::csvQuoted(c.note) << "\n";
    out.flush();
}

Result<std::vector<DimensionRow>> readDimensions(const std::string &path)
{
    auto text = readTextFile(path); // plain or NAME.csv.gz
    if (!text.ok())
        return Error{text.error().kind, text.error().message + " (the dimensions file)", SourceLocation{path, 0, 0}, {}};
    std::istringstream in(std::move(*text));
    auto fail = [&](int lineNo, const std::string &what) {
        return Error{ErrorKind::Parse, what, SourceLocation{path, lineNo, 1}, {}};
    };
    std::string line;
    if (!std::getline(in, line))
        return fail(1, "empty file, expected the header case,shape,candidate,kernel,dimension,...");
    const auto header = detail::splitCsvRecord(line);
    for (std::size_t i = 0; i < kColumns.size(); ++i)
        if (i >= header.size() || header[i] != kColumns[i])
            return fail(1, "column " + std::to_string(i + 1) + " must be '" + kColumns[i] + "'");
    auto parse = [](const std::string &cell, double &out) {
        if (cell.empty()) {
            out = kNone;
            return true;
        }
        try {
            std::size_t used = 0;
            out = std::stod(cell, &used);
            return used == cell.size();
        } catch (const std::exception &) {
            return false;
        }
    };
    std::vector<DimensionRow> rows;
    int lineNo = 1;
    while (std::getline(in, line)) {
        ++lineNo;
        if (line.empty() || line == "\r")
            continue;
        const auto cells = detail::splitCsvRecord(line);
        if (cells.size() != kColumns.size())
            return fail(lineNo, std::to_string(cells.size()) + " columns, expected " + std::to_string(kColumns.size()));
        DimensionRow r;
        r.family = cells[0];
        r.shape = cells[1];
        r.kernel = cells[3];
        DimensionComparison &c = r.comparison;
        c.dimension = cells[4];
        if (c.dimension.empty())
            return fail(lineNo, "the dimension is empty");
        double candidate = 0;
        if (!parse(cells[2], candidate) || std::isnan(candidate))
            return fail(lineNo, "candidate '" + cells[2] + "' is not a number");
        r.candidate = static_cast<int>(candidate);
        if (cells[5] != "0" && cells[5] != "1")
            return fail(lineNo, "comparable must be 0 or 1, not '" + cells[5] + "'");
        c.comparable = cells[5] == "1";
        const char *names[] = {"static_score", "measured_score", "static_value", "measured_value"};
        double *targets[] = {&c.staticScore, &c.measuredScore, &c.staticValue, &c.measuredValue};
        for (int i = 0; i < 4; ++i)
            if (!parse(cells[static_cast<std::size_t>(6 + i)], *targets[i]))
                return fail(lineNo, std::string(names[i]) + " '" + cells[static_cast<std::size_t>(6 + i)] +
                                        "' is not a number");
        if (c.comparable && (std::isnan(c.staticScore) || std::isnan(c.measuredScore)))
            return fail(lineNo, "a comparable row needs static_score and measured_score");
        c.quantity = cells[10];
        c.note = cells[11];
        rows.push_back(std::move(r));
    }
    return rows;
}

std::vector<DimensionAgreement> summarizeDimensions(const std::vector<DimensionRow> &rows, int worstCount)
{
    std::map<std::string, std::vector<const DimensionRow *>> groups;
    for (const auto &r : rows)
        groups[r.comparison.dimension].push_back(&r);
    std::vector<DimensionAgreement> out;
    for (const auto &[dimension, members] : groups) {
        DimensionAgreement a;
        a.dimension = dimension;
        std::vector<const DimensionRow *> comparable;
        double sum = 0;
        for (const DimensionRow *r : members) {
            const DimensionComparison &c = r->comparison;
            if (!c.comparable) {
                if (a.notComparable++ == 0)
                    a.firstReason = c.note;
                continue;
            }
            const double d = std::abs(c.staticScore - c.measuredScore);
            ++a.compared;
            a.withinOnePoint += d <= 1.0 + 1e-9 ? 1 : 0;
            sum += d;
            comparable.push_back(r);
        }
        a.meanAbsDifference = a.compared ? sum / a.compared : 0;
        std::stable_sort(comparable.begin(), comparable.end(), [](const DimensionRow *x, const DimensionRow *y) {
            return std::abs(x->comparison.staticScore - x->comparison.measuredScore) >
                   std::abs(y->comparison.staticScore - y->comparison.measuredScore);
        });
        for (std::size_t i = 0; i < comparable.size() && static_cast<int>(i) < worstCount; ++i)
            a.worst.push_back(*comparable[i]);
        out.push_back(std::move(a));
    }
    return out;
}

} // namespace stitch::rubric
