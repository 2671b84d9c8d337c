#pragma once
// The subcommands of `stitchcuda`. Each returns the process exit code: 0 success, 1 the input was
// rejected (compile errors, syntax errors), 2 usage or I/O errors.

#include <string>
#include <vector>

namespace stitch::cli {

struct InfoOptions {
    bool json = false;
};
int runInfo(const InfoOptions &options);

struct CompileOptions {
    std::string file;
    std::string arch = "sm_90";
    int blockSize = 256;       ///< threads per block assumed for the occupancy column
    bool json = false;
    std::string ptxOut;        ///< write the PTX here when set
    std::string cubinOut;      ///< write the CUBIN here when set
};
int runCompile(const CompileOptions &options);

struct OutlineOptions {
    std::string file;
    bool json = false;
};
int runOutline(const OutlineOptions &options);

/// -I and -D, as the compiler would be given them (.cu inputs; core/frontend/SourceExpansion.h).
struct SourceFlags {
    std::vector<std::string> includeDirs;
    std::vector<std::string> defines;  ///< NAME or NAME=VALUE
};

struct LiftOptions {
    std::string file;
    SourceFlags source;
    bool json = false;
    bool eval = false;                 ///< run the CPU interpreter on random inputs
    std::vector<std::string> sizes;    ///< NAME=VALUE bindings for --eval, over the file's own
    unsigned seed = 1;                 ///< random inputs of --eval
};
/// Lifts a .te or .cu file (core/frontend/Lift.h) and prints the graph, or JSON (docs/LIFT-JSON.md).
int runLift(const LiftOptions &options);

struct RunOptions {
    std::string file;          ///< launch-plan JSON (docs/RUNNER.md)
    bool json = false;
    bool remeasure = false;    ///< ignore the measurement cache (the new result is still stored)
    bool noCache = false;      ///< neither read nor write the cache
    bool profile = false;      ///< add a CUPTI-traced run even if the plan does not ask for one
    bool metrics = false;      ///< add a run under hardware counters (CUPTI range profiling)
    std::vector<std::string> metricsKernels; ///< report these kernels' counters only (implies metrics)
    int device = 0;
    bool cublas = false; ///< time cuBLAS on the GEMMs of the plan's generated program instead
};
/// Compiles the plan's CUDA source for the local GPU and runs, verifies, times and profiles it in
/// stitchcuda-worker. Exit 1 for no GPU, compile errors, faults, timeouts and wrong answers.
int runRun(const RunOptions &options);

struct GenerateOptions {
    std::string file;                  ///< .te or liftable .cu
    SourceFlags source;                ///< -I, -D
    std::string schedule;              ///< schedule JSON (docs/SCHEDULE.md); default: the built-in heuristics
    std::string arch = "sm_90";
    std::vector<std::string> sizes;    ///< NAME=VALUE over the file's own sizes
    std::string out;                   ///< folder for NAME.cu, NAME.schedule.json, NAME.plan.json
    bool tf32 = false;                 ///< allow TF32 tensor cores
    bool explain = false;              ///< print every decision's legal values and why others are not
    bool noCompile = false;            ///< skip the NVRTC check of the generated program
    bool print = false;                ///< print the source when no --out is given
};
/// Generates the CUDA program of a graph for a schedule (docs/SCHEDULE.md).
int runGenerate(const GenerateOptions &options);
struct BenchOptions {
    std::vector<std::string> only;     ///< substrings of "family:shape" to run
    /// FAMILY:SHAPE cases outside the table (gemm:2048x2048x512); with them, table cases run only
    /// where --only names them.
    std::vector<std::string> shapes;
    bool quick = false;                ///< fewer candidates and repeats
    bool verbose = false;              ///< print every candidate's time
    int repeats = 30;                  ///< timed runs of the winner
    int settleMs = 2000;               ///< idle before the winner's warm-up (MeasureOptions::settleMs)
    int maxCandidates = 0;             ///< 0: the whole sweep
    std::vector<std::string> where;    ///< KEY=VALUE: only candidates whose main group has these decisions
    bool list = false;                 ///< print the candidates per case and stop (no GPU)
    std::string arch = "sm_90";        ///< with list: the target (a run uses the GPU's own)
    std::string out;                   ///< also write the JSON here after every case
    std::string calibration;           ///< CSV of every candidate: measured vs the model's prediction
    bool metrics = false;              ///< with calibration: one CUPTI metric run per candidate -> *.dimensions.csv
    int device = 0;
    /// >= 0: instead of the sweep, the agents' choice on the family's example (`optimize --budget`):
    /// 0 greedy, N their search with candidates measured on this GPU.
    int agents = -1;
    std::string examples = "examples"; ///< with agents: where the .te examples are
};
/// The issue-4 benchmark on the local GPU; JSON on stdout, progress on stderr (bench/README.md).
int runBench(const BenchOptions &options);
struct CalibrateOptions {
    std::string file;                  ///< CSV written by `stitchcuda bench --calibration`
    std::string out;                   ///< write the re-predicted rows (with the model's facts) here
    std::string arch = "sm_90";
    bool summaryOnly = false;          ///< rank the file's own predictions, do not re-predict
    std::string dimensions;            ///< a bench --metrics *.dimensions.csv: static vs measured per dimension
    std::string cache;                 ///< keep NVRTC results here between runs (empty: compile every candidate)
    /// NAME=V1,V2,...: re-predict under every combination of these model constants (one analysis per
    /// candidate) and print rho per problem for each.
    std::vector<std::string> vary;
    /// NAME=V: the model constant this value for every prediction (re-predicted rows, --out, and the
    /// base of --vary); tries a change without rebuilding.
    std::vector<std::string> set;
    /// KEY[,KEY...]: after the summary, ln(predicted / measured) per group of these decisions or
    /// fact columns, against each problem's median (where the model is off, family by family).
    std::vector<std::string> by;
};
/// Re-predicts measured bench candidates with the current model (no GPU) and prints Spearman's rho per case.
int runCalibrate(const CalibrateOptions &options);
struct RubricOptions {
    std::string file;                  ///< .te or liftable .cu
    SourceFlags source;                ///< -I, -D
    std::string schedule;              ///< schedule JSON; default: the built-in heuristics
    std::string arch = "sm_90";
    std::vector<std::string> sizes;    ///< NAME=VALUE over the file's own sizes
    bool json = false;
    bool noCompile = false;            ///< skip NVRTC: estimated registers, no instruction mix
    bool tf32 = false;                 ///< allow TF32 tensor cores (the default schedule's precision)
    bool alternatives = false;         ///< also every decision's other values: why illegal, or their estimated time
    bool asWritten = false;            ///< .cu only: the program as written alone (default: both, side by side)
};
/// Scores the generated program on every rubric dimension (docs/RUBRIC.md). Exit 1 on a hard violation.
int runRubric(const RubricOptions &options);

struct OptimizeOptions {
    std::string file;                  ///< .te or liftable .cu
    SourceFlags source;                ///< -I, -D
    std::string arch = "sm_90";
    std::vector<std::string> sizes;    ///< NAME=VALUE over the file's own sizes
    bool tf32 = false;
    int budget = 0;                    ///< candidates of the policy-guided search
    std::vector<std::string> pins;     ///< AGENT.DECISION[@KERNEL]=VALUE
    unsigned long long seed = 1;
    std::string out;                   ///< folder for the program, its schedule and plan
    std::string trace;                 ///< the trace JSON (docs/AGENTS.md)
    std::string checkpoint;            ///< default: the shipped one for the architecture
    std::string policy = "agents";     ///< agents, heuristics or uniform
    bool json = false;                 ///< print the trace instead of the report
    bool noCompile = false;            ///< confirm with the compile-free estimate (no NVRTC)
    std::string measured;              ///< a folder of bench --calibration CSVs: measured times win
    bool measure = false;              ///< confirm candidates (and a .cu's input as written) on the local GPU
};
/// The agents' schedule for a program (docs/AGENTS.md). Exit 1 when nothing could be lifted.
int runOptimize(const OptimizeOptions &options);

struct TrainOptions {
    std::string arch = "sm_90";
    int episodes = 2000;
    int episodesPerUpdate = 16;
    unsigned long long seed = 1;
    std::string checkpoint;            ///< default ARCH.agents
    std::string csv;                   ///< default CHECKPOINT.csv
    bool resume = false;
    bool sparseOnly = false;           ///< the ablation: no rubric reward
    int problems = 256;                ///< generated training problems
    std::string command;               ///< the command line, stored in the checkpoint
    int evalEvery = 0;                 ///< updates between held-out evaluations (0: none)
    bool fullModel = false;            ///< fine-tune against the full model (NVRTC builds)
    bool measure = false;              ///< with it, final rewards measured on the local GPU
    std::string init;                  ///< start from this checkpoint
    std::string baselines;             ///< the held-out search baselines, kept in this file
};
/// Trains the agents with PPO (docs/AGENTS.md).
int runTrain(const TrainOptions &options);

struct EvaluateAgentsOptions {
    std::string checkpoint;
    std::string arch = "sm_90";
    int evaluations = 2000;            ///< of the search baseline, per problem
    int budget = 16;
    std::vector<std::string> only;     ///< held-out problems whose text contains one of these
    std::vector<std::string> problems; ///< FAMILY:SHAPE instead of the held-out list
    bool noCompile = false;            ///< compare estimates only (no NVRTC)
    unsigned long long seed = 1;
    /// bench --calibration CSVs: instead of the held-out table, whether the candidate the agents rank
    /// first in each measured set is among the fastest measured.
    std::vector<std::string> measured;
    /// Instead of the held-out table: this many random legal schedules per held-out problem, each
    /// estimated (compile-free) and confirmed (NVRTC), and the two rankings' Spearman rho.
    int rankAgreement = 0;
    bool measure = false;              ///< time everything on the local GPU
    int measuredSearch = 200;          ///< with measure: the search's best schedules timed per problem
};
/// The agents against the search baseline on the held-out problems (docs/AGENTS.md's table).
int runEvaluateAgents(const EvaluateAgentsOptions &options);

struct RetrainOptions {
    std::vector<std::string> traces;
    std::string checkpoint;            ///< default: the shipped one for the architecture
    std::string out;                   ///< default: the checkpoint itself
    std::string arch = "sm_90";
    int updates = 20;
    unsigned long long seed = 1;
    std::string baselines;
    bool noHeldOut = false;
    std::string csv;   ///< the curves, one row per update (train's CSV format)
};
/// Retrains the agents toward the overrides of traces that won (docs/AGENTS.md).
int runRetrain(const RetrainOptions &options);

/// Reads a whole file; on failure prints "stitchcuda: cannot read FILE: reason" and returns false.
bool readFile(const std::string &path, std::string &out);

} // namespace stitch::cli
