// stitchcuda: the headless face of StitchCUDA Studio. Links core only (no Qt), so it builds and
// runs on GPU machines without a desktop.
#include "Commands.h"

#include <CLI/CLI.hpp>

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
    return 2;
}
