#include "core/schedule/Schedule.h"

#include <sstream>

#include <nlohmann/json.hpp>

#include <algorithm>

namespace stitch::schedule {

using nlohmann::json;

const char *strategyName(Strategy s)
{
    switch (s) {
    case Strategy::Elementwise: return "elementwise";
    case Strategy::RowReduction: return "row_reduction";
    case Strategy::Gemm: return "gemm";
    case Strategy::Generic: return "generic";
    }
    return "generic";
}

Result<Strategy> parseStrategy(const std::string &name)
{
    for (Strategy s : kAllStrategies)
        if (name == strategyName(s))
            return s;
    return makeError(ErrorKind::Parse,
                     "unknown strategy \"" + name + "\": expected elementwise, row_reduction, gemm or generic");
}

const char *categoryName(Category c)
{
    switch (c) {
    case Category::Fusion: return "fusion";
    case Category::ParallelMapping: return "parallel_mapping";
    case Category::MemoryAccess: return "memory_access";
    case Category::InstructionScheduling: return "instruction_scheduling";
    }
    return "fusion";
}

const char *precisionName(Precision p) { return p == Precision::TF32 ? "tf32" : "fp32"; }

std::string DecisionDef::valueText(int value) const
{
    for (std::size_t i = 0; i < candidates.size() && i < valueNames.size(); ++i)
        if (candidates[i] == value)
            return valueNames[i];
    return std::to_string(value);
}

Result<int> DecisionDef::parseValue(const std::string &text) const
{
    for (std::size_t i = 0; i < candidates.size(); ++i) {
        if ((i < valueNames.size() && valueNames[i] == text) || std::to_string(candidates[i]) == text)
            return candidates[i];
    }
    std::string list;
    for (int c : candidates)
        list += (list.empty() ? "" : ", ") + valueText(c);
    return makeError(ErrorKind::InvalidArgument, key + ": " + text + " is not one of " + list);
}

namespace {

using C = Category;

/// `erf`, shared by the strategies whose kernels emit element-wise expressions (not the generic
/// one, whose float64 accumulators make the reference).
DecisionDef erfDef()
{
    return {"erf", C::InstructionScheduling,
            "1 + erf(z) and 1 - erf(z) over float32 (GELU's form): 1 plus CUDA's erff (library), or erfc(-z) and "
            "erfc(z) by one branch-free rational approximation (erfc: about 10 instructions fewer per result, "
            "relative error within 6e-7 of the sum for z >= -2, and none of the cancellation of 1 + erff(z) as "
            "erf(z) nears -1)",
            {0, 1}, {"library", "erfc"}, 0};
}

std::vector<DecisionDef> gemmDefs()
{
    return {
        {"block_m", C::ParallelMapping, "rows of C per thread block (BM)", {16, 32, 64, 128, 256}, {}, 128},
        {"block_n", C::ParallelMapping, "columns of C per thread block (BN)", {16, 32, 64, 128, 256}, {}, 128},
        {"thread_m", C::ParallelMapping, "rows of C per thread (TM), as two halves BM/2 apart", {2, 4, 8, 16}, {}, 8},
        {"thread_n", C::ParallelMapping, "columns of C per thread (TN), as two halves BN/2 apart", {2, 4, 8, 16}, {},
         8},
        {"swizzle", C::ParallelMapping, "block rows per rasterization group, for L2 reuse (1: row-major order)",
         {1, 2, 4, 8, 16}, {}, 8},
        {"split_k", C::ParallelMapping,
         "slices of K computed by separate blocks, summed (with the epilogue) by a second kernel",
         {1, 2, 4, 8, 16}, {}, 1},
        {"stream_k", C::ParallelMapping,
         "stream-K: the tiles past the last whole wave (with one more wave when they are under half a wave) have "
         "their k steps split evenly over one "
         "block per SM slot, each shared tile's partial sums added by the last block to arrive, so no SM idles "
         "through a partial last wave; the other tiles one per block",
         {0, 1}, {"off", "on"}, 0},
        {"block_k", C::MemoryAccess, "depth of the shared-memory tiles of A and B per step (BK)", {8, 16, 32}, {}, 8},
        {"vector", C::MemoryAccess, "elements per global load of A and B (1, 2 or 4 floats)", {1, 2, 4}, {}, 4},
        {"smem_pad", C::MemoryAccess, "floats of padding per shared-memory tile row, against bank conflicts", {0, 4}, {}, 4},
        {"store", C::MemoryAccess,
         "how the epilogue stores a thread's adjacent results (math=simt): one 64- or 128-bit store of the "
         "accumulators themselves (vector), one 32-bit store each (scalar), or one wide store of fresh copies "
         "(copy: acc + 0.0f, which turns a -0 result into +0). A wide store wants its registers adjacent and "
         "aligned; when they are the accumulators, ptxas may move accumulators between registers inside the k-loop "
         "to keep them so, and its FMAs then share register banks more often",
         {0, 1, 2}, {"vector", "scalar", "copy"}, 0},
        {"copy", C::MemoryAccess,
         "how tiles reach shared memory: loaded into registers and stored by the threads, copied by cp.async "
         "straight into a ring of `stages` buffers (sm_80+; no staging registers), or copied so by a producer "
         "warpgroup of its own while the others only compute (math=tf32_wgmma; stages handed over by mbarriers)",
         {0, 1, 2}, {"registers", "async", "producer"}, 0},
        {"stages", C::MemoryAccess,
         "shared-memory buffers: 2 overlaps the next tile's loads with this tile's math; 3-4 (copy=async) keep "
         "several tiles in flight",
         {1, 2, 3, 4}, {}, 2},
        {"min_blocks", C::InstructionScheduling, "__launch_bounds__ minimum blocks per SM (caps registers)", {1, 2, 3, 4}, {}, 1},
        {"math", C::InstructionScheduling,
         "what computes the products: FP32 FMAs on the CUDA cores, TF32 tensor cores by warp (mma.sync m16n8k8; "
         "needs precision tf32 and sm_80+; a warp then computes 8*thread_m x 4*thread_n results), or by warpgroup "
         "(wgmma m64nNk8, sm_90a: four warps compute 64 x N, one operand read from shared memory by descriptor)",
         {0, 1, 2}, {"simt", "tf32_mma", "tf32_wgmma"}, 0},
        {"transpose_b", C::MemoryAccess,
         "math=tf32_wgmma with B stored [k, j]: B's fragments loaded from shared memory into registers and rounded "
         "to TF32 for each tile (off), or a kernel first writes B transposed and rounded into a workspace, whose "
         "rows run along k as wgmma's shared operand needs, and the MMAs read both operands by descriptor (on: no "
         "fragment loads and one MMA group left running across each tile's barrier, for one more pass over B)",
         {0, 1}, {"off", "on"}, 0},
        erfDef(),
    };
}

std::vector<DecisionDef> rowDefs()
{
    return {
        {"threads_per_row", C::ParallelMapping, "threads that share one row", {32, 64, 128, 256, 512, 1024}, {}, 256},
        {"rows_per_block", C::ParallelMapping,
         "rows per thread block (with a cluster: rows its blocks share, each block holding its part of every one; "
         "needs exchange=push)",
         {1, 2, 3, 4, 8}, {}, 1},
        {"cluster", C::ParallelMapping,
         "thread blocks of a cluster sharing one long row through distributed shared memory (sm_90; 16 is "
         "non-portable)",
         {1, 2, 4, 8, 16}, {}, 1},
        {"row_steps", C::ParallelMapping,
         "rows each block (or cluster) handles one after another (fewer, longer-lived blocks and clusters)",
         {1, 2, 4, 8, 16}, {}, 1},
        {"grid", C::ParallelMapping,
         "one block (or cluster) per rows_per_block x row_steps rows (rows), or as many as the target's GPU holds "
         "at once, each walking the rows with the grid's stride (resident: correct on any GPU, sized for the "
         "target's; no block waits for a free slot, and only the last round of rows is partial)",
         {0, 1}, {"rows", "resident"}, 0},
        {"vector", C::MemoryAccess, "elements per global load and store (1, 2 or 4)", {1, 2, 4}, {}, 4},
        {"cache", C::MemoryAccess, "keep the row in registers between passes, or re-read it from memory",
         {0, 1}, {"none", "registers"}, 1},
        {"prefetch", C::MemoryAccess,
         "with row_steps > 1 and the row cached: load the next row while this one is reduced and stored, into "
         "registers (next_row: twice the registers) or by cp.async into shared memory (shared: sm_80+), or a "
         "quarter of it by cp.async.bulk into shared memory as soon as this row is in registers and the rest into "
         "the registers each output frees (bulk: sm_90)",
         {0, 1, 2, 3}, {"off", "next_row", "shared", "bulk"}, 0},
        {"column_inputs", C::MemoryAccess,
         "per-column vectors read at the column (layer norm's gamma[j] and beta[j]): from global memory at each "
         "use (global), or the block's span of them copied into shared memory once, read there by every row the "
         "block holds and walks (shared: needs grid=resident)",
         {0, 1}, {"global", "shared"}, 0},
        {"bulk_store", C::MemoryAccess,
         "how the outputs leave: each thread stores its own (off), or the threads write them into a shared-memory "
         "copy of the block's part of the row and the copy engine writes it to global memory (cp.async.bulk, "
         "sm_90) piece by piece as it fills, so the registers are free for the next row while it writes (on)",
         {0, 1}, {"off", "on"}, 0},
        {"reduce", C::InstructionScheduling, "how a row's partial results combine", {0, 1},
         {"shuffle", "shared"}, 0},
        {"exchange", C::InstructionScheduling,
         "how a cluster's blocks meet for each reduction: at a cluster barrier (barrier), or by pushes: warp 0 of "
         "each row writes its block's partial result into every block's slot with st.async, counted on that "
         "block's mbarrier, and waits on its own (push: no cluster barrier per row, so the rows of a block and "
         "the blocks of a cluster run on without waiting for each other)",
         {0, 1}, {"barrier", "push"}, 0},
        {"combine", C::InstructionScheduling,
         "softmax's row maximum and sum of exp(x - maximum): one exchange after the other (rounds), or both in one "
         "(online: each thread sums exp(x - its own maximum) and the partial sums are rescaled to the row's)",
         {0, 1}, {"rounds", "online"}, 0},
        {"exp", C::InstructionScheduling,
         "float exp: expf (precise, within 2 ulp, about 9 instructions), or ex2.approx.ftz of one FMA, exp(a - b) = "
         "2^(a log2 e - b log2 e) (fast: 2 instructions; the rounded exponent adds a relative error of about 6e-8 x "
         "(|a - b| + |b|), results below 2^-126 flush to zero)",
         {0, 1}, {"precise", "fast"}, 0},
        {"min_blocks", C::InstructionScheduling,
         "__launch_bounds__ minimum blocks per SM: caps registers so that several blocks (of several rows or "
         "clusters) overlap one's reductions with another's loads and stores",
         {1, 2, 3, 4}, {}, 1},
        erfDef(),
    };
}

std::vector<DecisionDef> elementwiseDefs()
{
    return {
        {"threads", C::ParallelMapping, "threads per block", {128, 256, 512, 1024}, {}, 256},
        {"items", C::ParallelMapping, "vectors per thread", {1, 2, 4}, {}, 2},
        {"vector", C::MemoryAccess, "elements per global load and store (1, 2 or 4)", {1, 2, 4}, {}, 4},
        erfDef(),
    };
}

std::vector<DecisionDef> genericDefs()
{
    return {{"threads", C::ParallelMapping, "threads per block", {64, 128, 256, 512}, {}, 256},
            // The same concept as the row strategy's key (threads along one row): one observation
            // slot for the agents.
            {"threads_per_row", C::ParallelMapping,
             "threads along the innermost dimension, each block a tile of threads / threads_per_row rows "
             "(0: the block runs over the flattened domain)",
             {0, 8, 16, 32, 64}, {}, 0},
            {"accumulate", C::InstructionScheduling,
             "type of reduction accumulators: the output's own, or float64 (for references)", {0, 1},
             {"native", "float64"}, 0}};
}

} // namespace

const std::vector<DecisionDef> &decisionDefs(Strategy s)
{
    static const std::vector<DecisionDef> gemm = gemmDefs(), row = rowDefs(), elementwise = elementwiseDefs(),
                                          generic = genericDefs();
    switch (s) {
    case Strategy::Gemm: return gemm;
    case Strategy::RowReduction: return row;
    case Strategy::Elementwise: return elementwise;
    case Strategy::Generic: return generic;
    }
    return generic;
}

const DecisionDef *findDecision(Strategy s, const std::string &key)
{
    for (const auto &d : decisionDefs(s))
        if (d.key == key)
            return &d;
    return nullptr;
}

int KernelGroup::value(const std::string &key) const
{
    if (auto it = values.find(key); it != values.end())
        return it->second;
    const DecisionDef *d = findDecision(strategy, key);
    return d ? d->defaultValue : 0;
}

const KernelGroup *Schedule::group(const std::string &name) const
{
    for (const auto &g : groups)
        if (g.name == name)
            return &g;
    return nullptr;
}

std::string toJson(const Schedule &schedule)
{
    json j = json::object();
    j["schema"] = "stitchcuda-schedule/1";
    j["arch"] = schedule.arch;
    j["precision"] = precisionName(schedule.precision);
    json groups = json::array();
    for (const auto &g : schedule.groups) {
        json gj = json::object();
        gj["name"] = g.name;
        gj["strategy"] = strategyName(g.strategy);
        gj["ops"] = g.ops;
        json decisions = json::object();
        for (const auto &d : decisionDefs(g.strategy)) {
            const int v = g.value(d.key);
            decisions[d.key] = d.valueNames.empty() ? json(v) : json(d.valueText(v));
        }
        gj["decisions"] = decisions;
        groups.push_back(gj);
    }
    j["groups"] = groups;
    // nlohmann's object keeps keys sorted: the text is stable for a given schedule.
    return j.dump(2) + "\n";
}

namespace {

[[noreturn]] void fail(const std::string &where, const std::string &what)
{
    throw Error{ErrorKind::Parse, where + ": " + what, std::nullopt, {}};
}

void onlyKeys(const json &j, const std::string &where, std::initializer_list<const char *> keys)
{
    for (const auto &[key, value] : j.items()) {
        (void)value;
        if (std::none_of(keys.begin(), keys.end(), [&](const char *k) { return key == k; })) {
            std::string list;
            for (const char *k : keys)
                list += (list.empty() ? "" : ", ") + std::string(k);
            fail(where, "unknown key \"" + key + "\" (expected " + list + ")");
        }
    }
}

std::string stringMember(const json &j, const char *key, const std::string &where, bool required = true)
{
    if (!j.contains(key)) {
        if (required)
            fail(where, std::string("missing \"") + key + "\"");
        return {};
    }
    if (!j[key].is_string())
        fail(where + "." + key, "expected a string");
    return j[key].get<std::string>();
}

} // namespace

Result<Schedule> parseSchedule(const std::string &text, const std::string &fileName)
{
    json j;
    try {
        j = json::parse(text);
    } catch (const json::parse_error &e) {
        // Locate the byte offset as line:column.
        int line = 1, column = 1;
        for (std::size_t i = 0; i + 1 < e.byte && i < text.size(); ++i) {
            if (text[i] == '\n') {
                ++line;
                column = 1;
            } else {
                ++column;
            }
        }
        return makeError(ErrorKind::Parse, std::string("invalid JSON: ") + e.what(),
                         SourceLocation{fileName, line, column});
    }
    try {
        if (!j.is_object())
            fail(fileName, "expected a JSON object");
        onlyKeys(j, fileName, {"schema", "arch", "precision", "groups"});
        Schedule s;
        if (auto schema = stringMember(j, "schema", fileName, false); !schema.empty() && schema != "stitchcuda-schedule/1")
            fail(fileName + ".schema", "\"" + schema + "\" is not stitchcuda-schedule/1");
        if (auto arch = stringMember(j, "arch", fileName, false); !arch.empty())
            s.arch = arch;
        if (auto p = stringMember(j, "precision", fileName, false); !p.empty()) {
            if (p == "fp32")
                s.precision = Precision::FP32;
            else if (p == "tf32")
                s.precision = Precision::TF32;
            else
                fail(fileName + ".precision", "\"" + p + "\" is not fp32 or tf32");
        }
        if (!j.contains("groups") || !j["groups"].is_array())
            fail(fileName, "missing \"groups\" (an array of kernel groups)");
        for (std::size_t gi = 0; gi < j["groups"].size(); ++gi) {
            const json &gj = j["groups"][gi];
            const std::string where = "groups[" + std::to_string(gi) + "]";
            if (!gj.is_object())
                fail(where, "expected an object");
            onlyKeys(gj, where, {"name", "strategy", "ops", "decisions"});
            KernelGroup g;
            g.name = stringMember(gj, "name", where);
            auto strategy = parseStrategy(stringMember(gj, "strategy", where));
            if (!strategy.ok())
                fail(where + ".strategy", strategy.error().message);
            g.strategy = *strategy;
            if (!gj.contains("ops") || !gj["ops"].is_array() || gj["ops"].empty())
                fail(where + ".ops", "expected a non-empty array of op names");
            for (const auto &op : gj["ops"]) {
                if (!op.is_string())
                    fail(where + ".ops", "expected op names (strings)");
                g.ops.push_back(op.get<std::string>());
            }
            if (gj.contains("decisions")) {
                if (!gj["decisions"].is_object())
                    fail(where + ".decisions", "expected an object of decision: value");
                for (const auto &[key, value] : gj["decisions"].items()) {
                    const DecisionDef *d = findDecision(g.strategy, key);
                    if (!d) {
                        std::string list;
                        for (const auto &def : decisionDefs(g.strategy))
                            list += (list.empty() ? "" : ", ") + def.key;
                        fail(where + ".decisions", "unknown decision \"" + key + "\" for strategy " +
                                                       strategyName(g.strategy) + " (expected " + list + ")");
                    }
                    std::string text;
                    if (value.is_number_integer())
                        text = std::to_string(value.get<long long>());
                    else if (value.is_string())
                        text = value.get<std::string>();
                    else
                        fail(where + ".decisions." + key, "expected an integer or a value name");
                    auto v = d->parseValue(text);
                    if (!v.ok())
                        fail(where + ".decisions", v.error().message);
                    g.values[key] = *v;
                }
            }
            s.groups.push_back(std::move(g));
        }
        return s;
    } catch (const Error &e) {
        return e;
    }
}

std::string describe(const KernelGroup &group)
{
    std::string out = group.name + " [" + strategyName(group.strategy) + "]";
    for (const auto &d : decisionDefs(group.strategy))
        out += " " + d.key + "=" + d.valueText(group.value(d.key));
    return out;
}

Result<Schedule> applyDescriptions(const Schedule &base, const std::string &text)
{
    Schedule out = base;
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::size_t end = text.find("; ", pos);
        if (end == std::string::npos)
            end = text.size();
        std::istringstream words(text.substr(pos, end - pos));
        std::string name, strategy, word;
        words >> name >> strategy;
        KernelGroup *g = nullptr;
        for (auto &candidate : out.groups)
            if (candidate.name == name)
                g = &candidate;
        if (!g)
            return Error{ErrorKind::InvalidArgument, "'" + name + "' is not a kernel group of the schedule"};
        if (strategy != std::string("[") + strategyName(g->strategy) + "]")
            return Error{ErrorKind::InvalidArgument,
                         name + ": strategy " + strategy + " differs from the schedule's " + strategyName(g->strategy)};
        // A decision the line leaves out takes its default, as in a schedule file: lines recorded
        // before a decision existed keep their meaning (a GEMM line without copy= staged in registers).
        g->values.clear();
        while (words >> word) {
            const std::size_t eq = word.find('=');
            const DecisionDef *d = eq == std::string::npos ? nullptr : findDecision(g->strategy, word.substr(0, eq));
            if (!d)
                return Error{ErrorKind::InvalidArgument, name + ": '" + word + "' is not KEY=VALUE of a " +
                                                             strategyName(g->strategy) + " decision"};
            auto v = d->parseValue(word.substr(eq + 1));
            if (!v)
                return v.error();
            g->set(d->key, *v);
        }
        pos = end + 2;
    }
    return out;
}

} // namespace stitch::schedule
