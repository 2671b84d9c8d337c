#include "core/cuda/NvrtcCompiler.h"

#include "core/cuda/CubinInfo.h"

#include <nvrtc.h>

#include <algorithm>
#include <chrono>
#include <cxxabi.h>
#include <cstdlib>
#include <memory>
#include <regex>
#include <sstream>

namespace stitch::cuda {

const KernelResources *CompileResult::kernel(const std::string &name) const
{
    for (const auto &k : kernels)
        if (k.name == name || k.mangledName == name)
            return &k;
    return nullptr;
}

NvrtcVersion nvrtcVersion()
{
    NvrtcVersion v;
    ::nvrtcVersion(&v.major, &v.minor);
    return v;
}

std::vector<std::string> supportedArchitectures()
{
    int count = 0;
    std::vector<std::string> out;
    if (nvrtcGetNumSupportedArchs(&count) != NVRTC_SUCCESS || count <= 0)
        return out;
    std::vector<int> archs(static_cast<std::size_t>(count));
    if (nvrtcGetSupportedArchs(archs.data()) != NVRTC_SUCCESS)
        return out;
    for (int a : archs)
        out.push_back("sm_" + std::to_string(a));
    return out;
}

std::string shortKernelName(const std::string &mangled)
{
    int status = 0;
    std::unique_ptr<char, void (*)(void *)> demangled(
        abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status), std::free);
    if (status != 0 || !demangled)
        return mangled; // extern "C" kernels are not mangled
    std::string full = demangled.get();
    // Cut at the parameter list: the first '(' outside template brackets.
    int depth = 0;
    std::size_t paren = full.size();
    for (std::size_t i = 0; i < full.size(); ++i) {
        char c = full[i];
        if (c == '<')
            ++depth;
        else if (c == '>')
            --depth;
        else if (c == '(' && depth == 0) {
            paren = i;
            break;
        }
    }
    std::string head = full.substr(0, paren);
    // Function templates demangle with their return type first ("void tk<128>"): drop it.
    depth = 0;
    std::size_t start = 0;
    for (std::size_t i = 0; i < head.size(); ++i) {
        char c = head[i];
        if (c == '<')
            ++depth;
        else if (c == '>')
            --depth;
        else if (c == ' ' && depth == 0)
            start = i + 1;
    }
    return head.substr(start);
}

std::vector<KernelResources> parsePtxasReport(const std::string &log)
{
    static const std::regex entryRe(R"(Compiling entry function '([^']+)' for '([^']+)')");
    static const std::regex frameRe(
        R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
    static const std::regex usedRe(R"(Used (\d+) registers)");
    static const std::regex barRe(R"(used (\d+) barriers)");
    static const std::regex smemRe(R"((\d+) bytes smem)");
    static const std::regex lmemRe(R"((\d+) bytes lmem)");
    static const std::regex cmemRe(R"((\d+) bytes cmem\[\d+\])");

    std::vector<KernelResources> kernels;
    std::istringstream in(log);
    std::string line;
    std::smatch m;
    while (std::getline(in, line)) {
        if (std::regex_search(line, m, entryRe)) {
            KernelResources k;
            k.mangledName = m[1];
            k.name = shortKernelName(k.mangledName);
            k.arch = m[2];
            kernels.push_back(std::move(k));
            continue;
        }
        if (kernels.empty())
            continue;
        KernelResources &k = kernels.back();
        if (std::regex_search(line, m, frameRe)) {
            k.stackFrameBytes = std::stoi(m[1]);
            k.spillStoreBytes = std::stoi(m[2]);
            k.spillLoadBytes = std::stoi(m[3]);
        }
        if (std::regex_search(line, m, usedRe)) {
            k.registers = std::stoi(m[1]);
            if (std::regex_search(line, m, barRe))
                k.barriers = std::stoi(m[1]);
            if (std::regex_search(line, m, smemRe))
                k.sharedBytes = std::stoi(m[1]);
            if (std::regex_search(line, m, lmemRe))
                k.localBytes = std::stoi(m[1]);
            for (auto it = std::sregex_iterator(line.begin(), line.end(), cmemRe); it != std::sregex_iterator(); ++it)
                k.constantBytes = std::max(k.constantBytes, 0) + std::stoi((*it)[1]);
        }
    }
    return kernels;
}

std::vector<Diagnostic> parseNvrtcLog(const std::string &log, const std::string &fileName)
{
    // EDG style: `file(12): error: text`, then the source line and a caret line, both indented by
    // two spaces; or `At end of source: error: text`.
    static const std::regex headRe(
        R"(^(.*)\((\d+)\): (catastrophic error|error|warning|remark)(?: #[\w-]+)?: (.*)$)");
    static const std::regex endRe(R"(^At end of source: (error|warning|catastrophic error): (.*)$)");

    std::vector<std::string> lines;
    {
        std::istringstream in(log);
        std::string line;
        while (std::getline(in, line))
            lines.push_back(line);
    }
    std::vector<Diagnostic> out;
    std::smatch m;
    for (std::size_t i = 0; i < lines.size(); ++i) {
        const std::string &line = lines[i];
        Diagnostic d;
        if (std::regex_match(line, m, headRe)) {
            d.location.file = m[1].str().empty() ? fileName : m[1].str();
            d.location.line = std::stoi(m[2]);
            const std::string sev = m[3];
            d.severity = sev == "warning" ? Severity::Warning : sev == "remark" ? Severity::Note : Severity::Error;
            d.message = m[4];
            // Caret line two lines below gives the column.
            if (i + 2 < lines.size()) {
                const std::string &caret = lines[i + 2];
                const auto pos = caret.find('^');
                if (pos != std::string::npos && caret.find_first_not_of(" \t^") == std::string::npos) {
                    d.location.column = pos >= 2 ? static_cast<int>(pos) - 1 : 1;
                    i += 2;
                }
            }
        } else if (std::regex_match(line, m, endRe)) {
            d.location.file = fileName;
            d.severity = m[1] == "warning" ? Severity::Warning : Severity::Error;
            d.message = std::string(m[2]) + " (at end of source)";
        } else {
            continue;
        }
        out.push_back(std::move(d));
    }
    return out;
}

namespace {

std::string errorText(nvrtcResult r) { return nvrtcGetErrorString(r); }

struct ProgramDeleter {
    void operator()(nvrtcProgram p) const { nvrtcDestroyProgram(&p); }
};
using ProgramPtr = std::unique_ptr<_nvrtcProgram, ProgramDeleter>;

} // namespace

Result<CompileResult> compile(const std::string &source, const CompileOptions &options)
{
    static const std::regex archRe(R"(^(sm|compute)_(\d+)([af]?)$)");
    std::smatch archMatch;
    bool archKnown = std::regex_match(options.arch, archMatch, archRe);
    if (archKnown) {
        const auto archs = supportedArchitectures();
        archKnown = std::find(archs.begin(), archs.end(), "sm_" + archMatch[2].str()) != archs.end();
    }
    if (!archKnown) {
        std::string list;
        for (const auto &a : supportedArchitectures())
            list += (list.empty() ? "" : ", ") + a;
        return makeError(ErrorKind::InvalidArgument,
                         "unknown architecture '" + options.arch + "': this NVRTC targets " + list);
    }
    const bool realArch = options.arch.rfind("sm_", 0) == 0;

    const auto start = std::chrono::steady_clock::now();
    nvrtcProgram raw = nullptr;
    nvrtcResult r = nvrtcCreateProgram(&raw, source.c_str(), options.fileName.c_str(), 0, nullptr, nullptr);
    if (r != NVRTC_SUCCESS)
        return makeError(ErrorKind::Compile, "nvrtcCreateProgram failed: " + errorText(r));
    ProgramPtr program(raw);

    std::vector<std::string> opts = {"--gpu-architecture=" + options.arch, "--std=c++17"};
    if (realArch)
        opts.push_back("--ptxas-options=-v");
    if (options.lineInfo)
        opts.push_back("-lineinfo");
    if (options.fastMath)
        opts.push_back("--use_fast_math");
    if (options.maxRegisters > 0)
        opts.push_back("--maxrregcount=" + std::to_string(options.maxRegisters));
    for (const auto &d : options.defines)
        opts.push_back("-D" + d);
    for (const auto &o : options.extraOptions)
        opts.push_back(o);
    std::vector<const char *> argv;
    for (const auto &o : opts)
        argv.push_back(o.c_str());

    r = nvrtcCompileProgram(program.get(), static_cast<int>(argv.size()), argv.data());

    CompileResult result;
    std::size_t logSize = 0;
    nvrtcGetProgramLogSize(program.get(), &logSize);
    if (logSize > 1) {
        result.log.resize(logSize);
        nvrtcGetProgramLog(program.get(), result.log.data());
        result.log.resize(logSize - 1); // drop the terminating NUL
    }
    auto diagnostics = parseNvrtcLog(result.log, options.fileName);

    if (r != NVRTC_SUCCESS) {
        Error e = makeError(ErrorKind::Compile, errorText(r));
        std::size_t errors = 0;
        for (const auto &d : diagnostics)
            errors += d.severity == Severity::Error;
        if (errors > 0) {
            const Diagnostic *first = nullptr;
            for (const auto &d : diagnostics)
                if (d.severity == Severity::Error) {
                    first = &d;
                    break;
                }
            e.message = std::to_string(errors) + (errors == 1 ? " error" : " errors") + "; first: " + first->message;
            if (first->location.known())
                e.location = first->location;
        } else if (!result.log.empty()) {
            e.message += ": " + result.log;
        }
        e.diagnostics = std::move(diagnostics);
        return e;
    }
    result.diagnostics = std::move(diagnostics);

    std::size_t ptxSize = 0;
    if ((r = nvrtcGetPTXSize(program.get(), &ptxSize)) != NVRTC_SUCCESS)
        return makeError(ErrorKind::Compile, "nvrtcGetPTXSize failed: " + errorText(r));
    result.ptx.resize(ptxSize);
    nvrtcGetPTX(program.get(), result.ptx.data());
    if (!result.ptx.empty() && result.ptx.back() == '\0')
        result.ptx.pop_back();

    if (realArch) {
        std::size_t cubinSize = 0;
        if ((r = nvrtcGetCUBINSize(program.get(), &cubinSize)) != NVRTC_SUCCESS)
            return makeError(ErrorKind::Compile, "nvrtcGetCUBINSize failed: " + errorText(r));
        result.cubin.resize(cubinSize);
        nvrtcGetCUBIN(program.get(), result.cubin.data());
    }
    result.kernels = parsePtxasReport(result.log);
    if (result.kernels.empty() && !result.cubin.empty()) {
        // NVRTC sometimes returns no ptxas report (seen on the GPU machine); the machine code
        // records the same registers, shared memory, stack and barriers, though not spills.
        auto fromCubin = readCubinResources(result.cubin, options.arch);
        if (!fromCubin.ok())
            return fromCubin.error();
        result.kernels = std::move(*fromCubin);
        if (!result.kernels.empty())
            result.diagnostics.push_back(Diagnostic{Severity::Note, SourceLocation{options.fileName, 0, 0},
                                                    "NVRTC returned no ptxas report: kernel resources were read from "
                                                    "the CUBIN; spill counts are unknown"});
    }
    if (!options.wantCubin)
        result.cubin.clear();
    result.compileMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return result;
}

} // namespace stitch::cuda
