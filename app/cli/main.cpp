// stitchcuda: the headless face of StitchCUDA Studio. Links core only (no Qt), so it builds and
// runs on GPU machines without a desktop.
#include "Commands.h"

#include <CLI/CLI.hpp>

namespace {

/// -I DIR and -D NAME[=VALUE], as nvcc takes them (repeatable; "-Iinc" and "-DTILE=32" work too).
void addSourceFlags(CLI::App *command, stitch::cli::SourceFlags &flags)
{
    command->add_option("-I,--include-dir", flags.includeDirs,
                        "Folder searched for quoted includes after the file's own (repeatable, as nvcc -I)");
    command->add_option("-D,--define", flags.defines, "Macro NAME or NAME=VALUE for the .cu file (repeatable, as nvcc -D)");
}

} // namespace

int main(int argc, char **argv)
{
    CLI::App app{"StitchCUDA: compile, inspect and optimize CUDA kernels"};
    app.set_version_flag("--version", std::string("stitchcuda ") + STITCHCUDA_VERSION);
    app.require_subcommand(1);

    stitch::cli::InfoOptions info;
    auto *infoCmd = app.add_subcommand("info", "Toolkit, NVRTC, tree-sitter and the GPUs of this machine");
    infoCmd->add_flag("--json", info.json, "Print JSON");

    stitch::cli::CompileOptions compile;
    auto *compileCmd = app.add_subcommand("compile", "Compile a .cu file with NVRTC and report per-kernel resources");
    compileCmd->add_option("file", compile.file, "CUDA source file")->required();
    compileCmd->add_option("--arch", compile.arch, "Target architecture (sm_75, sm_80, sm_86, sm_89, sm_90, ...)")
        ->capture_default_str();
    compileCmd->add_option("--block", compile.blockSize, "Threads per block for the occupancy column")
        ->capture_default_str()
        ->check(CLI::Range(1, 1024));
    compileCmd->add_flag("--json", compile.json, "Print JSON");
    compileCmd->add_option("--ptx", compile.ptxOut, "Write the PTX to this file");
    compileCmd->add_option("--cubin", compile.cubinOut, "Write the CUBIN to this file");

    stitch::cli::OutlineOptions outline;
    auto *outlineCmd = app.add_subcommand("outline", "List the kernels and launch sites of a .cu file (tree-sitter)");
    outlineCmd->add_option("file", outline.file, "CUDA source file")->required();
    outlineCmd->add_flag("--json", outline.json, "Print JSON");

    stitch::cli::LiftOptions lift;
    auto *liftCmd = app.add_subcommand("lift", "Lift a .te or .cu file into the tensor-expression graph");
    liftCmd->add_option("file", lift.file, "Tensor-expression (.te) or CUDA (.cu, .cuh) file")->required();
    liftCmd->add_flag("--json", lift.json, "Print JSON (schema stitchcuda-lift/1, docs/LIFT-JSON.md)");
    liftCmd->add_flag("--eval", lift.eval, "Run the CPU interpreter on random inputs and print output checksums");
    liftCmd->add_option("--size", lift.sizes, "Size value for --eval, NAME=VALUE (repeatable)");
    liftCmd->add_option("--seed", lift.seed, "Seed of the random inputs of --eval")->capture_default_str();
    addSourceFlags(liftCmd, lift.source);

    stitch::cli::RunOptions run;
    auto *runCmd = app.add_subcommand("run", "Run, verify, time and profile a launch plan on the local GPU (docs/RUNNER.md)");
    runCmd->add_option("plan", run.file, "Launch-plan JSON file")->required();
    runCmd->add_flag("--json", run.json, "Print JSON (schema stitchcuda-run/1)");
    runCmd->add_flag("--remeasure", run.remeasure, "Measure again even if the cache has this program");
    runCmd->add_flag("--no-cache", run.noCache, "Neither read nor write the measurement cache");
    runCmd->add_flag("--profile", run.profile, "Add a CUPTI-traced run (per-kernel time, registers, shared memory)");
    runCmd->add_flag("--metrics", run.metrics,
                     "Add a run under hardware counters (occupancy, DRAM traffic, sectors per request, branch efficiency, "
                     "bank conflicts, instruction mix; docs/RUNNER.md)");
    runCmd->add_option("--metrics-kernel", run.metricsKernels,
                       "Report hardware counters of this kernel only (repeatable; implies --metrics)");
    runCmd->add_option("--device", run.device, "GPU ordinal")->capture_default_str()->check(CLI::NonNegativeNumber);
    runCmd->add_flag("--cublas", run.cublas,
                     "Time cuBLAS on the GEMMs of the plan's generated program instead (same buffers and seed; "
                     "a plan written by generate or optimize)");

    stitch::cli::GenerateOptions generate;
    auto *generateCmd = app.add_subcommand("generate", "Generate the CUDA program of a .te or .cu file for a schedule");
    generateCmd->add_option("file", generate.file, "Tensor-expression (.te) or liftable CUDA (.cu) file")->required();
    generateCmd->add_option("--schedule", generate.schedule, "Schedule JSON (docs/SCHEDULE.md); default: heuristics");
    generateCmd->add_option("--arch", generate.arch, "Target architecture")->capture_default_str();
    generateCmd->add_option("--size", generate.sizes, "Size value, NAME=VALUE (repeatable)");
    generateCmd->add_option("--out", generate.out, "Write NAME.cu, NAME.schedule.json and NAME.plan.json here");
    generateCmd->add_flag("--tf32", generate.tf32, "Allow TF32 tensor cores");
    generateCmd->add_flag("--explain", generate.explain, "Print each decision's legal values and why others are not");
    generateCmd->add_flag("--no-compile", generate.noCompile, "Skip the NVRTC check of the generated code");
    generateCmd->add_flag("--print", generate.print, "Print the generated source (when no --out)");
    addSourceFlags(generateCmd, generate.source);

    stitch::cli::BenchOptions bench;
    auto *benchCmd = app.add_subcommand("bench", "Benchmark generated code on the local GPU (JSON on stdout)");
    benchCmd->add_option("--only", bench.only, "Run cases whose family:shape contains this (repeatable)");
    benchCmd->add_option("--shape", bench.shapes,
                         "Also run a family at a shape outside the table, FAMILY:SHAPE (repeatable; e.g. "
                         "gemm:2048x2048x512, softmax:4096x1024); then table cases run only where --only names them");
    benchCmd->add_flag("--quick", bench.quick, "Fewer candidates and repeats");
    benchCmd->add_flag("--verbose", bench.verbose, "Print every candidate's time");
    benchCmd->add_option("--repeats", bench.repeats, "Timed runs of the winner")->capture_default_str();
    benchCmd->add_option("--settle-ms", bench.settleMs,
                         "Idle milliseconds before the winner's timed runs, so the sweep before it does not leave the GPU "
                         "under its power cap; the warm-up after it lasts 20 ms at least, for the clocks to ramp up")
        ->check(CLI::Range(0, 60000))
        ->capture_default_str();
    benchCmd->add_option("--max-candidates", bench.maxCandidates, "Cap the sweep per case (0: all)");
    benchCmd->add_option("--where", bench.where,
                         "Only candidates whose main kernel has this decision value, KEY=VALUE (repeatable; e.g. "
                         "copy=async); cases without a match are skipped");
    benchCmd->add_flag("--list", bench.list, "Print each case's candidates and stop (no GPU needed)");
    benchCmd->add_option("--arch", bench.arch, "With --list: target architecture (a run uses the GPU's)")
        ->capture_default_str();
    benchCmd->add_option("--device", bench.device, "GPU ordinal")->capture_default_str();
    benchCmd->add_option("--agents", bench.agents,
                         "Instead of the sweep: time what `stitchcuda optimize --budget N` chooses on the family's "
                         "example (0: the agents' greedy schedule; N > 0: their search, candidates measured here)")
        ->check(CLI::Range(0, 4096));
    benchCmd->add_option("--examples", bench.examples, "With --agents: the folder of the .te examples")
        ->capture_default_str();
    benchCmd->add_option("--out", bench.out, "Also write the JSON to this file after every case");
    benchCmd->add_option("--calibration", bench.calibration,
                         "Write every candidate's measured and predicted time (CSV) for the rubric's model");
    benchCmd->add_flag("--metrics", bench.metrics,
                       "With --calibration: profile every candidate once with CUPTI and write its static and measured "
                       "rubric dimensions per kernel to the calibration file's .dimensions.csv");

    stitch::cli::CalibrateOptions calibrate;
    auto *calibrateCmd = app.add_subcommand(
        "calibrate", "Re-predict the candidates of a bench --calibration file with the current model (no GPU)");
    calibrateCmd->add_option("file", calibrate.file, "CSV written by stitchcuda bench --calibration");
    calibrateCmd->add_option("--dimensions", calibrate.dimensions,
                             "Agreement of static and measured dimensions in a bench --metrics .dimensions.csv "
                             "(with FILE, the run's calibration CSV: the static side derived again by this build)");
    calibrateCmd->add_option("--out", calibrate.out, "Write the re-predicted rows, with the model's facts, here");
    calibrateCmd->add_option("--arch", calibrate.arch, "Target architecture")->capture_default_str();
    calibrateCmd->add_flag("--summary", calibrate.summaryOnly, "Only rank the file's own predictions");
    calibrateCmd->add_option("--cache", calibrate.cache,
                             "Keep the NVRTC results (PTX, registers) in this folder and reuse them on the next run");
    calibrateCmd->add_option("--vary", calibrate.vary,
                             "Model constant NAME=V1,V2,... (repeatable): rho per problem under every combination, "
                             "each candidate analysed once (docs/RUBRIC.md, Fitting)");
    calibrateCmd->add_option("--by", calibrate.by,
                             "KEY[,KEY...]: the residual ln(predicted / measured) per group of these schedule decisions or "
                             "fact columns, against each problem's median (e.g. --by block_k,stages)");
    calibrateCmd->add_option("--set", calibrate.set,
                             "Model constant NAME=V (repeatable) for every prediction, --out and --vary included");

    stitch::cli::RubricOptions rubric;
    auto *rubricCmd = app.add_subcommand("rubric", "Score the generated program on every rubric dimension (docs/RUBRIC.md)");
    rubricCmd->add_option("file", rubric.file, "Tensor-expression (.te) or liftable CUDA (.cu) file")->required();
    rubricCmd->add_option("--schedule", rubric.schedule, "Schedule JSON (docs/SCHEDULE.md); default: heuristics");
    rubricCmd->add_option("--arch", rubric.arch, "Target architecture")->capture_default_str();
    rubricCmd->add_option("--size", rubric.sizes, "Size value, NAME=VALUE (repeatable)");
    addSourceFlags(rubricCmd, rubric.source);
    rubricCmd->add_flag("--json", rubric.json, "Print JSON (schema stitchcuda-rubric/2)");
    rubricCmd->add_flag("--no-compile", rubric.noCompile, "Skip NVRTC: estimated registers, no instruction mix");
    rubricCmd->add_flag("--tf32", rubric.tf32, "Allow TF32 tensor cores (as generate --tf32)");
    rubricCmd->add_flag("--as-written", rubric.asWritten,
                        "Score the .cu program as its host code launches it (default for .cu: as written and the "
                        "default schedule, side by side)");
    rubricCmd->add_flag("--alternatives", rubric.alternatives,
                        "Also every decision's other values: why each illegal one is, each legal one's estimated time");

    stitch::cli::OptimizeOptions optimize;
    auto *optimizeCmd = app.add_subcommand("optimize", "The agents decide the schedule and Stitch writes the program (docs/AGENTS.md)");
    optimizeCmd->add_option("file", optimize.file, "Tensor-expression (.te) or liftable CUDA (.cu) file")->required();
    optimizeCmd->add_option("--arch", optimize.arch, "Target architecture")->capture_default_str();
    optimizeCmd->add_option("--size", optimize.sizes, "Size value, NAME=VALUE (repeatable)");
    addSourceFlags(optimizeCmd, optimize.source);
    optimizeCmd->add_flag("--tf32", optimize.tf32, "Allow TF32 tensor cores");
    optimizeCmd->add_option("--budget", optimize.budget, "Candidates of the policy-guided search (0: the agents' greedy schedule)")
        ->capture_default_str()
        ->check(CLI::Range(0, 4096));
    optimizeCmd->add_option("--pin", optimize.pins,
                            "Fix a decision, AGENT.DECISION[@KERNEL_OR_OP]=VALUE (repeatable; e.g. memory_access.block_k=16)");
    optimizeCmd->add_option("--seed", optimize.seed, "Seed of the search (and of --policy sampling)")->capture_default_str();
    optimizeCmd->add_option("--out", optimize.out, "Write NAME.cu, NAME.schedule.json and NAME.plan.json here");
    optimizeCmd->add_option("--trace", optimize.trace, "Write the optimization trace (JSON) here");
    optimizeCmd->add_option("--checkpoint", optimize.checkpoint, "The agents' weights (default: the shipped ones for --arch)");
    optimizeCmd->add_option("--policy", optimize.policy, "agents, heuristics or uniform (for comparisons)")->capture_default_str();
    optimizeCmd->add_flag("--json", optimize.json, "Print the trace instead of the report");
    optimizeCmd->add_option("--measured", optimize.measured,
                            "A folder of bench --calibration CSVs (e.g. bench/results): a candidate timed there counts "
                            "with its measured time");
    optimizeCmd->add_flag("--no-compile", optimize.noCompile, "Confirm candidates with the compile-free estimate (no NVRTC)");
    optimizeCmd->add_flag("--measure", optimize.measure,
                          "Confirm candidates by timing them on the local GPU (and, for a .cu, the input as written)");

    stitch::cli::TrainOptions trainOpts;
    auto *trainCmd = app.add_subcommand("train", "Train the agents with PPO on generated problems (docs/AGENTS.md)");
    trainCmd->add_option("--arch", trainOpts.arch, "Target architecture")->capture_default_str();
    trainCmd->add_option("--episodes", trainOpts.episodes, "Episodes in all")->capture_default_str()->check(CLI::Range(1, 10000000));
    trainCmd->add_option("--episodes-per-update", trainOpts.episodesPerUpdate, "Episodes per PPO update")
        ->capture_default_str()
        ->check(CLI::Range(1, 4096));
    trainCmd->add_option("--seed", trainOpts.seed, "Seed (weights, problems, episodes)")->capture_default_str();
    trainCmd->add_option("--checkpoint", trainOpts.checkpoint, "Checkpoint to write (default ARCH.agents)");
    trainCmd->add_option("--csv", trainOpts.csv, "Reward and loss curves (default CHECKPOINT.csv)");
    trainCmd->add_option("--problems", trainOpts.problems, "Generated training problems")->capture_default_str()->check(CLI::Range(1, 100000));
    trainCmd->add_flag("--resume", trainOpts.resume, "Continue from --checkpoint");
    trainCmd->add_option("--eval-every", trainOpts.evalEvery,
                         "Updates between evaluations on the held-out problems (the CSV's held_out column; 0: none)")
        ->capture_default_str();
    trainCmd->add_option("--baselines", trainOpts.baselines, "Keep the held-out search baselines in this JSON file");
    trainCmd->add_flag("--full-model", trainOpts.fullModel,
                       "Fine-tune against the full model: final rewards and the held-out figure by NVRTC builds");
    trainCmd->add_flag("--measure", trainOpts.measure,
                       "With the full model: final rewards and the held-out figure measured on the local GPU");
    trainCmd->add_option("--init", trainOpts.init, "Start from this checkpoint's weights");
    trainCmd->add_flag("--sparse-only", trainOpts.sparseOnly, "The ablation: the final reward alone, no rubric reward");

    stitch::cli::EvaluateAgentsOptions evaluateAgents;
    auto *evaluateCmd = app.add_subcommand("evaluate-agents", "The agents against the search baseline on the held-out problems");
    evaluateCmd->add_option("--checkpoint", evaluateAgents.checkpoint, "The agents' weights (default: the shipped ones)");
    evaluateCmd->add_option("--arch", evaluateAgents.arch, "Target architecture")->capture_default_str();
    evaluateCmd->add_option("--evaluations", evaluateAgents.evaluations, "Schedules the search baseline evaluates per problem")
        ->capture_default_str()
        ->check(CLI::Range(1, 1000000));
    evaluateCmd->add_option("--budget", evaluateAgents.budget, "Candidates of the policy-guided search")->capture_default_str();
    evaluateCmd->add_option("--only", evaluateAgents.only, "Held-out problems containing this (repeatable)");
    evaluateCmd->add_option("--problem", evaluateAgents.problems, "FAMILY:SHAPE instead of the held-out list (repeatable)");
    evaluateCmd->add_flag("--no-compile", evaluateAgents.noCompile, "Compare compile-free estimates (no NVRTC)");
    evaluateCmd->add_option("--seed", evaluateAgents.seed, "Seed of the search")->capture_default_str();
    evaluateCmd->add_option("--rank-agreement", evaluateAgents.rankAgreement,
                            "Rank N random legal schedules per held-out problem by the estimate and the full model (rho)")
        ->check(CLI::Range(0, 100000));
    evaluateCmd->add_flag("--measure", evaluateAgents.measure,
                          "Time the schedules on the local GPU: the agents' and the search's best --measured-search");
    evaluateCmd->add_option("--measured-search", evaluateAgents.measuredSearch,
                            "With --measure: the search's best schedules (by the estimate) timed per problem")
        ->capture_default_str()
        ->check(CLI::Range(1, 100000));
    evaluateCmd->add_option("--measured", evaluateAgents.measured,
                            "A bench --calibration CSV: rank each measured set's candidates by the agents (repeatable)");

    stitch::cli::RetrainOptions retrainOpts;
    auto *retrainCmd = app.add_subcommand("retrain", "Retrain the agents from traces with your overrides (docs/AGENTS.md)");
    retrainCmd->add_option("--from", retrainOpts.traces, "Trace files (stitchcuda optimize --pin ... --trace T.json)")
        ->required();
    retrainCmd->add_option("--checkpoint", retrainOpts.checkpoint, "The agents to start from (default: the shipped ones)");
    retrainCmd->add_option("--out", retrainOpts.out, "Where to write the retrained agents (default: --checkpoint)");
    retrainCmd->add_option("--arch", retrainOpts.arch, "Target architecture")->capture_default_str();
    retrainCmd->add_option("--updates", retrainOpts.updates, "PPO updates")->capture_default_str()->check(CLI::Range(0, 100000));
    retrainCmd->add_option("--seed", retrainOpts.seed, "Seed")->capture_default_str();
    retrainCmd->add_option("--baselines", retrainOpts.baselines, "The held-out search baselines (JSON, kept between runs)");
    retrainCmd->add_flag("--no-held-out", retrainOpts.noHeldOut, "Skip the held-out figure before and after");
    retrainCmd->add_option("--csv", retrainOpts.csv, "Write the reward and loss curves here (train's CSV format)");

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError &e) {
        return app.exit(e) == 0 ? 0 : 2;
    }
    if (*infoCmd)
        return stitch::cli::runInfo(info);
    if (*compileCmd)
        return stitch::cli::runCompile(compile);
    if (*outlineCmd)
        return stitch::cli::runOutline(outline);
    if (*liftCmd)
        return stitch::cli::runLift(lift);
    if (*runCmd)
        return stitch::cli::runRun(run);
    if (*generateCmd)
        return stitch::cli::runGenerate(generate);
    if (*calibrateCmd)
        return stitch::cli::runCalibrate(calibrate);
    if (*benchCmd)
        return stitch::cli::runBench(bench);
    if (*rubricCmd)
        return stitch::cli::runRubric(rubric);
    if (*optimizeCmd)
        return stitch::cli::runOptimize(optimize);
    if (*trainCmd) {
        for (int i = 0; i < argc; ++i)
            trainOpts.command += (i ? " " : "") + std::string(i == 0 ? "stitchcuda" : argv[i]);
        return stitch::cli::runTrain(trainOpts);
    }
    if (*evaluateCmd)
        return stitch::cli::runEvaluateAgents(evaluateAgents);
    if (*retrainCmd)
        return stitch::cli::runRetrain(retrainOpts);
    return 2;
}
