#include "core/codegen/AsWritten.h"

#include "core/cuda/SourceCompiler.h"
#include "core/frontend/CudaSourceIndex.h"
#include "core/runner/PlanFile.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <sstream>

namespace stitch::codegen {

using frontend::cudalift::BufferPlan;
using frontend::cudalift::CudaLiftDetail;
using frontend::cudalift::HostEvent;
using frontend::cudalift::KernelArgument;

namespace {

Error unsupported(const std::string &message, const SourceLocation &where)
{
    return makeError(ErrorKind::Unsupported, message,
                     where.known() ? std::optional<SourceLocation>(where) : std::nullopt);
}

/// The runner's type for a scalar parameter declared as `type` ("const int", "float", "size_t").
std::optional<ir::DType> scalarType(const std::string &declared)
{
    // The type's words without qualifiers, run together: "const unsigned int" -> "unsignedint".
    std::string type;
    std::istringstream words(declared);
    for (std::string w; words >> w;)
        if (w != "const" && w != "volatile" && w != "__restrict__" && w != "signed")
            type += w;
    if (type == "float")
        return ir::DType::F32;
    if (type == "double")
        return ir::DType::F64;
    if (type == "int" || type == "unsigned" || type == "unsignedint" || type == "int32_t" || type == "uint32_t")
        return ir::DType::I32;
    if (type == "long" || type == "unsignedlong" || type == "longlong" || type == "unsignedlonglong" ||
        type == "longint" || type == "int64_t" || type == "uint64_t" || type == "size_t" || type == "ptrdiff_t")
        return ir::DType::I64;
    return std::nullopt;
}

/// Byte offset of a 1-based line:column in `text`.
std::size_t byteAt(const std::string &text, const SourceLocation &loc)
{
    std::size_t at = 0;
    for (int line = 1; line < loc.line && at < text.size(); ++at)
        if (text[at] == '\n')
            ++line;
    return std::min(text.size(), at + static_cast<std::size_t>(std::max(loc.column - 1, 0)));
}

/// The dynamic shared memory of the launch at `loc` (`<<<grid, block, bytes>>>`): the lifter does
/// not model it, so only a literal is accepted. nullopt: not a literal.
std::optional<unsigned> dynamicSharedBytes(const std::string &text, const SourceLocation &loc)
{
    const std::size_t open = text.find("<<<", byteAt(text, loc));
    const std::size_t close = open == std::string::npos ? open : text.find(">>>", open);
    if (close == std::string::npos)
        return 0u;
    std::vector<std::string> parts(1);
    int depth = 0;
    for (std::size_t i = open + 3; i < close; ++i) {
        const char c = text[i];
        depth += (c == '(' || c == '[' || c == '{') - (c == ')' || c == ']' || c == '}');
        if (c == ',' && depth == 0)
            parts.emplace_back();
        else if (!std::isspace(static_cast<unsigned char>(c)))
            parts.back() += c;
    }
    if (parts.size() < 3)
        return 0u;
    const std::string &bytes = parts[2];
    if (bytes.empty() || !std::all_of(bytes.begin(), bytes.end(), [](unsigned char c) { return std::isdigit(c); }) ||
        bytes.size() > 9)
        return std::nullopt;
    return static_cast<unsigned>(std::stoul(bytes));
}

/// What the host does to a buffer before the first launch, and whether a launch passes it.
struct BufferHistory {
    bool zeroed = false; ///< the last fill before the first launch was a memset to zero
    bool argument = false;
};

} // namespace

Result<std::string> resizeSource(const std::string &source,
                                 const std::vector<frontend::cudalift::SizeDefinition> &definitions,
                                 const ir::SizeBindings &values)
{
    std::vector<const frontend::cudalift::SizeDefinition *> edits;
    for (const auto &d : definitions) {
        auto v = values.find(d.name);
        if (!d.fileScope || v == values.end() || v->second == d.value)
            continue;
        if (d.literal.endByte <= d.literal.beginByte || d.literal.endByte > source.size())
            return unsupported("size '" + d.name + "' is defined without a literal to set to " +
                                   std::to_string(v->second) + " for the device code",
                               d.location);
        edits.push_back(&d);
    }
    // From the end, so earlier offsets stay valid; a size defined twice is rewritten once.
    std::sort(edits.begin(), edits.end(), [](auto *a, auto *b) { return a->literal.beginByte > b->literal.beginByte; });
    edits.erase(std::unique(edits.begin(), edits.end(),
                            [](auto *a, auto *b) { return a->literal.beginByte == b->literal.beginByte; }),
                edits.end());
    std::string out = source;
    for (const auto *d : edits)
        out.replace(d->literal.beginByte, d->literal.endByte - d->literal.beginByte,
                    std::to_string(values.at(d->name)));
    return out;
}

std::vector<std::string> hostConstantDefines()
{
    return {"FLT_MAX=3.402823466e+38F", "FLT_MIN=1.175494351e-38F", "INFINITY=__int_as_float(0x7f800000)",
            "NAN=__int_as_float(0x7fffffff)"};
}

Result<runner::KernelLaunch> evaluateLaunch(const std::string &source, const CudaLiftDetail &detail,
                                            const frontend::SourceIndex &index, std::size_t l,
                                            const ir::SizeBindings &sizes)
{
    const auto &launch = detail.launches.at(l);
    const SourceLocation where = l < detail.program.launches.size() ? detail.program.launches[l].location
                                                                    : SourceLocation{};
    const std::string what = "launch of " + launch.kernel;
    auto kernel = std::find_if(index.kernels.begin(), index.kernels.end(), [&](const frontend::KernelInfo &info) {
        return info.name == launch.kernel && info.qualifier == "__global__";
    });
    if (kernel == index.kernels.end() || kernel->parameters.size() != launch.arguments.size())
        return unsupported(what + ": its __global__ definition with " + std::to_string(launch.arguments.size()) +
                               " parameters is not in the file",
                           where);
    runner::KernelLaunch k;
    k.kernel = launch.kernel;
    unsigned *dims[] = {&k.config.gridX,  &k.config.gridY,  &k.config.gridZ,
                        &k.config.blockX, &k.config.blockY, &k.config.blockZ};
    for (std::size_t d = 0; d < 6; ++d) {
        const ir::Expr &e = d < 3 ? launch.grid[d] : launch.block[d - 3];
        auto v = ir::evaluateSizeExpr(e, sizes);
        if (!v)
            return unsupported(what + ": " + (d < 3 ? "grid" : "block") + " dimension " + std::to_string(d % 3) +
                                   " is unknown at these sizes: " + v.error().message,
                               where);
        if (*v < 1 || *v > 0x7fffffff)
            return makeError(ErrorKind::InvalidArgument,
                             what + ": " + (d < 3 ? "grid" : "block") + " dimension " + std::to_string(d % 3) +
                                 " is " + std::to_string(*v),
                             where);
        *dims[d] = static_cast<unsigned>(*v);
    }
    auto shared = dynamicSharedBytes(source, where);
    if (!shared)
        return unsupported(what + ": its dynamic shared memory size is not a literal", where);
    k.config.dynamicSharedBytes = *shared;
    for (std::size_t a = 0; a < launch.arguments.size(); ++a) {
        const KernelArgument &arg = launch.arguments[a];
        const frontend::KernelParameter &param = kernel->parameters[a];
        const std::string argWhat =
            what + ": argument '" + arg.text + "' (parameter " + param.type + " " + param.name + ")";
        if (arg.kind == KernelArgument::Kind::Buffer) {
            auto offset = ir::evaluateSizeExpr(arg.pointer.offset, sizes);
            if (!offset || *offset != 0)
                return unsupported(
                    argWhat + " points into its buffer at an offset; a launch plan passes whole buffers", where);
            const auto b = static_cast<std::size_t>(arg.pointer.buffer);
            if (arg.pointer.buffer < 0 || b >= detail.buffers.size())
                return unsupported(argWhat + " is not a buffer this program allocates", where);
            k.args.push_back(runner::KernelArg::buffer(detail.buffers[b].name));
            continue;
        }
        if (param.type.find('*') != std::string::npos || param.type.find('&') != std::string::npos)
            return unsupported(argWhat + " is a pointer the lifter cannot follow to one of the program's cudaMalloc "
                                         "buffers; a launch plan passes only those",
                               where);
        auto type = scalarType(param.type);
        if (!type)
            return unsupported(argWhat + ": the runner passes int, long, size_t, float and double scalars only",
                               where);
        double value = 0;
        if (arg.scalar.kind() == ir::ExprKind::FloatConst) {
            value = arg.scalar.floatValue();
        } else {
            auto v = ir::evaluateSizeExpr(arg.scalar, sizes);
            if (!v)
                return unsupported(argWhat + " is unknown at these sizes: " + v.error().message, where);
            value = static_cast<double>(*v);
        }
        if (ir::isFloat(*type))
            k.args.push_back(runner::KernelArg::scalar(*type, value));
        else // C converts a floating argument to an integer parameter by truncation, as here
            k.args.push_back(runner::KernelArg::scalar(*type, static_cast<std::int64_t>(value)));
    }
    return k;
}

Result<AsWrittenProgram> asWrittenProgram(const std::string &source, const std::string &fileName,
                                          const CudaLiftDetail &detail, const ir::SizeBindings &sizes)
{
    AsWrittenProgram out;
    out.fileName = fileName;
    out.defines = hostConstantDefines();
    out.sizes = detail.program.sizes;
    for (const auto &[name, value] : sizes)
        out.sizes[name] = value;
    const SourceLocation fileStart{fileName, 1, 1};
    if (detail.launches.empty() || std::any_of(detail.program.launches.begin(), detail.program.launches.end(),
                                               [](const frontend::LiftedLaunch &l) { return l.inferred; }))
        return unsupported("the program has no host code that launches its kernels: there is nothing as written to run",
                           fileStart);
    auto resized = resizeSource(source, detail.sizes, out.sizes);
    if (!resized)
        return resized.error();
    out.source = std::move(*resized);
    const frontend::SourceIndex index = frontend::indexCudaSource(source, fileName);

    std::vector<BufferHistory> history(detail.buffers.size());
    bool launched = false;
    for (const HostEvent &ev : detail.events) {
        const std::string bufferName = ev.buffer >= 0 && static_cast<std::size_t>(ev.buffer) < detail.buffers.size()
                                           ? detail.buffers[static_cast<std::size_t>(ev.buffer)].name
                                           : std::string("?");
        const bool fills = ev.kind == HostEvent::Kind::CopyIn || ev.kind == HostEvent::Kind::HostWrite ||
                           ev.kind == HostEvent::Kind::Zero;
        if (fills && launched)
            return unsupported("the host fills '" + bufferName +
                                   "' between launches; a launch plan fills buffers only before the first",
                               ev.location);
        if (ev.kind == HostEvent::Kind::DeviceCopy || ev.kind == HostEvent::Kind::ExternalWrite)
            return unsupported("the host changes '" + bufferName +
                                   "' in a way a launch plan cannot replay (a device copy or an unmodelled write)",
                               ev.location);
        if (fills && bufferName != "?")
            history[static_cast<std::size_t>(ev.buffer)].zeroed = ev.kind == HostEvent::Kind::Zero;
        if (ev.kind != HostEvent::Kind::Launch)
            continue;
        launched = true;
        const auto l = static_cast<std::size_t>(ev.launch);
        if (ev.launch < 0 || l >= detail.launches.size())
            return unsupported("a launch the lifter did not record", ev.location);
        const auto &launch = detail.launches[l];
        const SourceLocation where =
            l < detail.program.launches.size() ? detail.program.launches[l].location : ev.location;
        const std::string what = "launch of " + launch.kernel;
        if (!launch.lifted) {
            std::string why = "the lifter refused it";
            for (const auto &k : detail.program.opaque)
                if (k.name == launch.kernel)
                    why = k.why.toString();
            return unsupported(what + " is not lifted, so the graph cannot check it (" + why + ")", where);
        }
        auto k = evaluateLaunch(source, detail, index, l, out.sizes);
        if (!k)
            return k.error();
        for (const KernelArgument &arg : launch.arguments)
            if (arg.kind == KernelArgument::Kind::Buffer && arg.pointer.buffer >= 0 &&
                static_cast<std::size_t>(arg.pointer.buffer) < detail.buffers.size())
                history[static_cast<std::size_t>(arg.pointer.buffer)].argument = true;
        out.plan.launches.push_back(std::move(*k));
    }

    for (std::size_t i = 0; i < detail.buffers.size(); ++i) {
        const BufferPlan &bp = detail.buffers[i];
        const BufferHistory &h = history[i];
        runner::BufferSpec b;
        b.name = bp.name;
        b.dtype = bp.dtype;
        auto count = ir::evaluateSizeExpr(bp.elements, out.sizes);
        if (!count)
            return unsupported("buffer '" + bp.name + "' has an unknown size: " + count.error().message, fileStart);
        if (*count < 1)
            return makeError(ErrorKind::InvalidArgument,
                             "buffer '" + bp.name + "' has " + std::to_string(*count) + " elements", fileStart);
        b.count = static_cast<std::uint64_t>(*count);
        const bool input = !bp.inputTensor.empty(), output = !bp.outputTensor.empty();
        if ((input || output) && !h.argument)
            return unsupported("kernels use '" + bp.name +
                                   "' without it being a kernel argument (a __constant__ or __device__ "
                                   "variable?); a launch plan fills and reads only arguments",
                               fileStart);
        b.role = input && output ? runner::BufferRole::InOut
                 : input         ? runner::BufferRole::Input
                 : output        ? runner::BufferRole::Output
                                 : runner::BufferRole::Scratch;
        if (h.zeroed)
            b.init.kind = runner::BufferInit::Kind::Zero;
        if (output) {
            out.tensorForBuffer[b.name] = bp.outputTensor;
            out.bufferForTensor[bp.outputTensor] = b.name;
        }
        if (input) {
            (output ? out.inputTensorForBuffer : out.tensorForBuffer)[b.name] = bp.inputTensor;
            out.bufferForTensor[bp.inputTensor] = b.name;
        }
        out.plan.buffers.push_back(std::move(b));
    }
    return out;
}

Result<runner::GpuReference> compileAsWritten(const AsWrittenProgram &program, const std::string &arch)
{
    cuda::CompileOptions options;
    options.arch = arch;
    options.fileName = program.fileName;
    options.defines = program.defines;
    auto compiled = cuda::compileProgram(program.source, options);
    if (!compiled)
        return compiled.error();
    // From the CUDA compute cache NVRTC runs no ptxas and reports no kernels; the PTX names them.
    if (compiled->kernels.empty())
        compiled->kernels = runner::kernelsFromPtx(compiled->ptx, arch);
    runner::GpuReference reference;
    reference.module = std::move(compiled->cubin);
    reference.plan = program.plan;
    reference.bufferMap = program.bufferForTensor;
    if (auto st = runner::resolveKernelNames(reference.plan, compiled->kernels); !st)
        return st.error();
    return reference;
}

runner::CpuReference asWrittenCpuReference(const AsWrittenProgram &program, const ir::Graph &graph)
{
    runner::CpuReference reference;
    reference.graph = graph;
    reference.sizes = program.sizes;
    reference.tensorForBuffer = program.tensorForBuffer;
    reference.inputTensorForBuffer = program.inputTensorForBuffer;
    return reference;
}

} // namespace stitch::codegen
