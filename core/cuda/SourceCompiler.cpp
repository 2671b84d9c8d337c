#include "core/cuda/SourceCompiler.h"

#include "core/frontend/DeviceCode.h"

#include <cstdlib>
#include <filesystem>

namespace stitch::cuda {

std::vector<std::string> toolkitIncludeDirs()
{
    std::string base;
    if (const char *env = std::getenv("STITCHCUDA_CUDA_INCLUDE"); env && *env)
        base = env;
    else
        base = STITCHCUDA_CUDA_INCLUDE_DIR;
    std::vector<std::string> dirs{base};
    // CUDA 13 keeps libcu++ (cuda/std/...) under include/cccl.
    if (std::filesystem::exists(base + "/cccl"))
        dirs.push_back(base + "/cccl");
    return dirs;
}

std::string archForSource(const std::string &source, const std::string &arch)
{
    if (arch == "sm_90" && source.find("__CUDA_ARCH_FEAT_SM90_ALL") != std::string::npos)
        return "sm_90a";
    return arch;
}

Result<CompileResult> compileProgram(const std::string &source, CompileOptions options)
{
    options.arch = archForSource(source, options.arch);
    const auto index = frontend::indexCudaSource(source, options.fileName);
    const auto tu = frontend::deviceTranslationUnit(source, index);

    const std::filesystem::path dir = std::filesystem::path(options.fileName).parent_path();
    if (!dir.empty())
        options.extraOptions.push_back("-I" + dir.string());
    for (const auto &inc : toolkitIncludeDirs())
        options.extraOptions.push_back("-I" + inc);

    auto result = compile(tu.source, options);
    if (result)
        result->diagnostics.insert(result->diagnostics.end(), tu.notes.begin(), tu.notes.end());
    return result;
}

} // namespace stitch::cuda
