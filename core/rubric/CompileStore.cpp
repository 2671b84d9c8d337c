#include "core/rubric/CompileStore.h"

#include "core/common/Sha256.h"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

namespace stitch::rubric {

namespace {

constexpr const char *kFormat = "stitchcuda-compile-store/2"; // 2: the CUBIN too (the SASS scan)

std::string nvrtcTag()
{
    const auto v = cuda::nvrtcVersion();
    return "nvrtc " + std::to_string(v.major) + "." + std::to_string(v.minor);
}

} // namespace

CompileStore::CompileStore(std::string directory) : m_directory(std::move(directory)) {}

std::string CompileStore::entryPath(const std::string &source, const std::string &arch) const
{
    // The NVRTC version is part of the key: another compiler may allocate other registers.
    return (std::filesystem::path(m_directory) / (sha256Hex(source + "\n" + arch + "\n" + nvrtcTag()) + ".ptxres"))
        .string();
}

std::optional<cuda::CompileResult> CompileStore::load(const std::string &source, const std::string &arch) const
{
    std::ifstream in(entryPath(source, arch), std::ios::binary);
    if (!in)
        return std::nullopt;
    std::string line;
    if (!std::getline(in, line) || line != kFormat || !std::getline(in, line) || line != nvrtcTag())
        return std::nullopt;
    cuda::CompileResult out;
    while (std::getline(in, line)) {
        std::istringstream fields(line);
        std::string tag;
        fields >> tag;
        if (tag == "kernel") {
            cuda::KernelResources k;
            fields >> k.mangledName >> k.name >> k.registers >> k.sharedBytes >> k.constantBytes >> k.stackFrameBytes >>
                k.spillStoreBytes >> k.spillLoadBytes >> k.barriers >> k.localBytes >> k.arch;
            if (!fields)
                return std::nullopt;
            out.kernels.push_back(std::move(k));
        } else if (tag == "ptx") {
            std::size_t bytes = 0;
            if (!(fields >> bytes))
                return std::nullopt;
            out.ptx.resize(bytes);
            if (!in.read(out.ptx.data(), static_cast<std::streamsize>(bytes)) || in.get() != '\n')
                return std::nullopt; // cut short: compile again
        } else if (tag == "cubin") {
            std::size_t bytes = 0;
            if (!(fields >> bytes))
                return std::nullopt;
            out.cubin.resize(bytes);
            if (!in.read(out.cubin.data(), static_cast<std::streamsize>(bytes)) || in.peek() != EOF)
                return std::nullopt;
            return out;
        } else {
            return std::nullopt;
        }
    }
    return std::nullopt; // no CUBIN section
}

Status CompileStore::save(const std::string &source, const std::string &arch, const cuda::CompileResult &result) const
{
    std::error_code ec;
    std::filesystem::create_directories(m_directory, ec);
    if (ec)
        return Error{ErrorKind::Io, "cannot create the compile store: " + ec.message(), SourceLocation{m_directory, 0, 0}, {}};
    const std::string path = entryPath(source, arch);
    // Unique per thread, so parallel saves of the same source never share a temporary file.
    std::ostringstream tmp;
    tmp << path << ".tmp" << std::this_thread::get_id();
    {
        std::ofstream out(tmp.str(), std::ios::binary | std::ios::trunc);
        if (!out)
            return Error{ErrorKind::Io, "cannot write the compile store", SourceLocation{tmp.str(), 0, 0}, {}};
        out << kFormat << "\n" << nvrtcTag() << "\n";
        for (const auto &k : result.kernels) {
            if (k.mangledName.find_first_of(" \t\n") != std::string::npos ||
                k.name.find_first_of(" \t\n") != std::string::npos || k.name.empty())
                return Error{ErrorKind::InvalidArgument, "kernel name '" + k.name + "' cannot be stored"};
            out << "kernel " << k.mangledName << " " << k.name << " " << k.registers << " " << k.sharedBytes << " "
                << k.constantBytes << " " << k.stackFrameBytes << " " << k.spillStoreBytes << " " << k.spillLoadBytes
                << " " << k.barriers << " " << k.localBytes << " " << (k.arch.empty() ? arch : k.arch) << "\n";
        }
        out << "ptx " << result.ptx.size() << "\n" << result.ptx << "\n";
        out << "cubin " << result.cubin.size() << "\n";
        out.write(result.cubin.data(), static_cast<std::streamsize>(result.cubin.size()));
        if (!out.flush())
            return Error{ErrorKind::Io, "cannot write the compile store", SourceLocation{tmp.str(), 0, 0}, {}};
    }
    std::filesystem::rename(tmp.str(), path, ec);
    if (ec)
        return Error{ErrorKind::Io, "cannot write the compile store: " + ec.message(), SourceLocation{path, 0, 0}, {}};
    return Ok{};
}

} // namespace stitch::rubric
