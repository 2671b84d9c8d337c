#include "core/codegen/Program.h"

#include "core/codegen/CudaWriter.h"
#include "core/cuda/SourceCompiler.h"

#include <algorithm>
#include <cstdio>
#include <set>
#include <stdexcept>

namespace stitch::codegen {

using schedule::Strategy;

namespace {

std::vector<KernelCode> generateKernels(const GenContext &ctx)
{
    switch (ctx.group.strategy) {
    case Strategy::Gemm: return generateGemmKernels(ctx);
    case Strategy::RowReduction: return {generateRowKernel(ctx)};
    case Strategy::Elementwise: return {generateElementwiseKernel(ctx)};
    case Strategy::Generic: return {generateGenericKernel(ctx)};
    }
    return {generateGenericKernel(ctx)};
}

/// A carried kernel's launch in the host launcher, as the input made it (at the bound sizes).
/// Buffers go through stitch_carried_ptr: the kernel's parameter types are the input's (an
/// unsigned char * the graph calls something else).
std::string carriedLaunchLine(const CarriedLaunch &c)
{
    const auto &cfg = c.launch.config;
    std::string args;
    for (const auto &a : c.launch.args) {
        std::string text;
        if (a.isBuffer()) {
            text = "stitch_carried_ptr{" + cIdentifier(std::get<std::string>(a.value)) + "}";
        } else {
            const auto &v = std::get<runner::ScalarArg>(a.value);
            char buf[64];
            if (ir::isFloat(v.dtype))
                std::snprintf(buf, sizeof buf, "(%s)%.17g", ir::cudaTypeName(v.dtype), v.floatValue);
            else
                std::snprintf(buf, sizeof buf, "(%s)%lldLL", ir::cudaTypeName(v.dtype), static_cast<long long>(v.intValue));
            text = buf;
        }
        args += (args.empty() ? "" : ", ") + text;
    }
    return "::" + std::string(kCarriedNamespace) + "::" + c.kernel + "<<<dim3(" + std::to_string(cfg.gridX) + ", " +
           std::to_string(cfg.gridY) + ", " + std::to_string(cfg.gridZ) + "), dim3(" + std::to_string(cfg.blockX) + ", " +
           std::to_string(cfg.blockY) + ", " + std::to_string(cfg.blockZ) + "), " + std::to_string(cfg.dynamicSharedBytes) +
           ", stream>>>(" + args + "); // carried unchanged from " + c.where.toString();
}

std::string launcherSource(const GeneratedProgram &p, const ir::Graph &graph)
{
    CudaWriter w;
    w.line("#ifndef __CUDACC_RTC__");
    w.comment("Host launcher (nvcc builds it; NVRTC skips it): runs the whole program on `stream` with the\n"
              "caller's device pointers. Intermediates live only between the kernels that need them.");
    const CarriedKernels &carried = p.carried;
    std::set<std::string> shared; // plan buffers other tensors share: written through them
    for (const auto &[tensor, buffer] : carried.planBuffer)
        shared.insert(buffer);
    std::string params;
    for (const auto &t : graph.tensors()) {
        if (t.role == ir::TensorRole::Intermediate || carried.planBuffer.count(t.name))
            continue; // an intermediate lives here; a tensor sharing another's buffer is passed as that one
        const bool readOnly = t.role == ir::TensorRole::Input && !shared.count(t.name) && !carried.written.count(t.name);
        params += (params.empty() ? "" : ", ") + std::string(readOnly ? "const " : "") + ir::cudaTypeName(t.dtype) +
                  " *" + cIdentifier(t.name);
    }
    for (const auto &b : carried.buffers) // memory only the carried kernels use
        params += (params.empty() ? "" : ", ") + std::string(ir::cudaTypeName(b.dtype)) + " *" + cIdentifier(b.name);
    for (const auto &s : graph.sizeVars())
        params += (params.empty() ? "" : ", ") + std::string("int ") + cIdentifier(s);
    params += std::string(params.empty() ? "" : ", ") + "cudaStream_t stream";
    if (!carried.empty()) {
        w.comment("Passes a buffer to a carried kernel as whatever pointer type the input declared.");
        w.line("struct stitch_carried_ptr { void *p; template <class T> operator T *() const { return static_cast<T *>(p); } };");
    }
    w.line("extern \"C\" cudaError_t " + p.name + "_run(" + params + ")");
    w.open("");
    // Grid sizes in 64-bit arithmetic (M * N passes 2^31), checked against CUDA's limits before
    // anything is allocated or launched.
    ExprScope host;
    host.graph = &graph;
    host.wideSizes = true;
    for (std::size_t i = 0; i < p.kernels.size(); ++i) {
        const auto &grid = p.kernels[i].code.grid;
        const std::string g = "grid" + std::to_string(i) + "_";
        w.line("const long long " + g + "[3] = {" + emitExpr(grid[0], host) + ", " + emitExpr(grid[1], host) + ", " +
               emitExpr(grid[2], host) + "};");
        w.line("if (" + g + "[0] < 1 || " + g + "[0] > 2147483647LL || " + g + "[1] < 1 || " + g + "[1] > 65535 || " + g +
               "[2] < 1 || " + g + "[2] > 65535)");
        w.line("    return cudaErrorInvalidConfiguration; // " + p.kernels[i].code.name + ": sizes past one launch");
    }
    w.line("cudaError_t status_ = cudaSuccess;");
    // Kernels are named after their group's output, which is also a parameter name here: `::` names
    // the kernel. Shared memory past 48 KiB, static and dynamic together, is opted into before
    // anything is allocated (the opt-in is harmless below it; the static part is ptxas's).
    // Clusters of more than 8 blocks (__cluster_dims__ up to 16 on sm_90) are non-portable: the
    // kernel opts into them, or its launch fails as a cluster misconfiguration (run 20 call 10).
    for (const auto &k : p.kernels) {
        if (k.code.clusterSize > 8) {
            w.line("if ((status_ = cudaFuncSetAttribute(::" + k.code.name +
                   ", cudaFuncAttributeNonPortableClusterSizeAllowed, 1)) != cudaSuccess)");
            w.line("    return status_;");
        }
        if (k.code.dynamicSharedBytes > 0) {
            w.line("if ((status_ = cudaFuncSetAttribute(::" + k.code.name +
                   ", cudaFuncAttributeMaxDynamicSharedMemorySize, " + std::to_string(k.code.dynamicSharedBytes) +
                   ")) != cudaSuccess)");
            w.line("    return status_;");
        }
    }
    std::vector<std::string> scratch;
    for (ir::TensorId id : p.buffers) {
        const ir::Tensor &t = *graph.tensor(id);
        if (t.role != ir::TensorRole::Intermediate)
            continue;
        const std::string name = cIdentifier(t.name);
        std::string count = "1";
        for (const auto &d : t.shape.dims())
            count += " * (size_t)(" + emitExpr(d, host) + ")";
        w.line(std::string(ir::cudaTypeName(t.dtype)) + " *" + name + " = nullptr;");
        w.line("if ((status_ = cudaMallocAsync((void **)&" + name + ", " + count + " * sizeof(*" + name +
               "), stream)) != cudaSuccess)");
        w.line("    return status_;");
        scratch.push_back(name);
    }
    // Workspace sizes in 64-bit arithmetic too (split K's M * N * slices passes 2^31).
    for (const auto &k : p.kernels)
        for (const auto &buffer : k.code.scratch) {
            if (std::find(scratch.begin(), scratch.end(), buffer.name) != scratch.end())
                continue;
            const std::string bytes = "(size_t)(" + emitExpr(buffer.elements, host) + ") * sizeof(*" + buffer.name + ")";
            w.line(std::string(ir::cudaTypeName(buffer.dtype)) + " *" + buffer.name + " = nullptr;");
            w.line("if ((status_ = cudaMallocAsync((void **)&" + buffer.name + ", " + bytes + ", stream)) != cudaSuccess)");
            w.line("    return status_;");
            if (buffer.zeroed) {
                w.line("if ((status_ = cudaMemsetAsync(" + buffer.name + ", 0, " + bytes + ", stream)) != cudaSuccess)");
                w.line("    return status_;");
            }
            scratch.push_back(buffer.name);
        }
    for (const auto &c : carried.launches)
        if (c.launch.config.dynamicSharedBytes > 48 * 1024) {
            w.line("if ((status_ = cudaFuncSetAttribute(::" + std::string(kCarriedNamespace) + "::" + c.kernel +
                   ", cudaFuncAttributeMaxDynamicSharedMemorySize, " + std::to_string(c.launch.config.dynamicSharedBytes) +
                   ")) != cudaSuccess)");
            w.line("    return status_;");
        }
    for (const LaunchStep &step : launchOrder(p.kernelStages(), carried)) {
        if (step.carried) {
            w.line(carriedLaunchLine(carried.launches[step.index]));
            continue;
        }
        const auto &k = p.kernels[step.index];
        std::string args;
        for (const auto &param : k.code.params) {
            std::string arg = param.scratch.empty() ? param.name : param.scratch;
            if (param.tensor && param.tensorId >= 0 && !carried.planBuffer.empty())
                arg = cIdentifier(carried.bufferFor(graph.tensor(param.tensorId)->name));
            args += (args.empty() ? "" : ", ") + arg;
        }
        const std::string g = "grid" + std::to_string(step.index) + "_";
        w.open("");
        w.line("const dim3 grid_((unsigned)" + g + "[0], (unsigned)" + g + "[1], (unsigned)" + g + "[2]);");
        w.line("::" + k.code.name + "<<<grid_, dim3(" + std::to_string(k.code.block[0]) + ", " + std::to_string(k.code.block[1]) +
               ", " + std::to_string(k.code.block[2]) + "), " + std::to_string(k.code.dynamicSharedBytes) + ", stream>>>(" +
               args + ");");
        w.close();
    }
    w.line("status_ = cudaGetLastError();");
    for (const auto &name : scratch)
        w.line("cudaFreeAsync(" + name + ", stream);");
    w.line("return status_;");
    w.close();
    w.line("#endif");
    return w.str();
}

} // namespace

std::string describeKernel(const GeneratedKernel &kernel)
{
    return (kernel.code.name != kernel.group.name ? kernel.code.name + ", of " : std::string()) +
           schedule::describe(kernel.group);
}

std::vector<int> GeneratedProgram::kernelStages() const
{
    std::vector<int> stages;
    for (const auto &k : kernels)
        stages.push_back(k.stage);
    return stages;
}

Result<GeneratedProgram> generateProgram(const schedule::Problem &problem, const schedule::Schedule &sched,
                                         const CarriedKernels *carried)
{
    if (auto st = schedule::validateSchedule(sched, problem); !st)
        return st.error();
    GeneratedProgram p;
    if (carried)
        p.carried = *carried;
    p.name = cIdentifier(problem.graph.name().empty() ? "program" : problem.graph.name());
    p.schedule = sched;
    const auto wide = wideTensors(problem.graph, problem.sizes);
    std::set<ir::TensorId> buffers;
    for (const auto &t : problem.graph.tensors())
        if (t.role != ir::TensorRole::Intermediate)
            buffers.insert(t.id);
    bool cooperativeGroups = false;
    try {
        for (const auto &group : sched.groups) {
            auto analysis = schedule::analyzeGroup(problem.graph, group.ops, group.strategy);
            if (!analysis.ok())
                return analysis.error();
            GenContext ctx{problem.graph, *analysis, group, problem.sizes, wide, group.name, problem.arch};
            for (KernelCode &code : generateKernels(ctx)) {
                cooperativeGroups = cooperativeGroups || code.clusterSize > 1;
                p.kernels.push_back({std::move(code), group, analysis->ops.front()->stage}); // one stage per group
            }
            for (ir::TensorId id : analysis->stored)
                buffers.insert(id);
        }
    } catch (const std::exception &e) {
        return makeError(ErrorKind::Unsupported, std::string("code generation failed: ") + e.what());
    }
    p.buffers.assign(buffers.begin(), buffers.end());

    CudaWriter w;
    w.comment("Generated by StitchCUDA from graph '" + problem.graph.name() + "' for " + problem.arch.name + ".\n" +
              "Sizes:" + [&] {
                  std::string s;
                  for (const auto &[name, value] : problem.sizes)
                      s += " " + name + "=" + std::to_string(value);
                  return s;
              }() + "\nKernels in launch order:" + [&] {
                  std::string s;
                  for (const auto &k : p.kernels)
                      s += "\n  " + describeKernel(k);
                  return s;
              }());
    w.line("#ifndef __CUDACC_RTC__");
    w.line("#include <cuda_runtime.h>");
    w.line("#endif");
    if (cooperativeGroups)
        w.line("#include <cooperative_groups.h>");
    w.line();
    std::string source = w.str();
    for (const auto &k : p.kernels)
        if (k.code.source.find("stitch_floordiv(") != std::string::npos) {
            source += floorDivHelperSource() + "\n\n";
            break;
        }
    for (const auto &k : p.kernels)
        source += k.code.source + "\n";
    if (!p.carried.empty()) {
        source += "// Carried unchanged from " + p.carried.fileName + ": kernels the lifter keeps opaque, run in the\n"
                  "// input's order between the generated ones:\n";
        for (const auto &c : p.carried.launches)
            source += "//   " + c.kernel + " (" + c.where.toString() + "): " + c.why + "\n";
        for (const auto &inc : p.carried.includes)
            source += inc + "\n";
        source += p.carried.section;
        // Diagnostics after it name the generated file again.
        const auto lines = static_cast<long>(std::count(source.begin(), source.end(), '\n'));
        source += "#line " + std::to_string(lines + 2) + " \"" + p.name + ".cu\"\n";
    }
    source += launcherSource(p, problem.graph);
    p.source = std::move(source);
    return p;
}

Result<cuda::CompileResult> compileGenerated(const std::string &source, const std::string &fileName,
                                             const std::string &arch, bool lineInfo)
{
    cuda::CompileOptions co;
    co.arch = cuda::archForSource(source, arch);
    co.fileName = fileName;
    co.lineInfo = lineInfo;
    for (const auto &inc : cuda::toolkitIncludeDirs())
        co.extraOptions.push_back("-I" + inc);
    return cuda::compile(source, co);
}

Result<runner::LaunchPlan> toLaunchPlan(const GeneratedProgram &program, const ir::Graph &graph, const ir::SizeBindings &sizes)
{
    runner::LaunchPlan plan;
    const CarriedKernels &carried = program.carried;
    for (ir::TensorId id : program.buffers) {
        const ir::Tensor &t = *graph.tensor(id);
        auto extents = t.shape.evaluate(sizes);
        if (!extents.ok())
            return extents.error();
        if (carried.planBuffer.count(t.name))
            continue; // shares the buffer of the tensor it maps to
        runner::BufferSpec b;
        b.name = t.name;
        b.dtype = t.dtype;
        b.count = static_cast<std::uint64_t>(std::max<std::int64_t>(ir::elementCount(*extents), 1));
        b.shape = *extents;
        b.role = t.role == ir::TensorRole::Input    ? runner::BufferRole::Input
                 : t.role == ir::TensorRole::Output ? runner::BufferRole::Output
                                                     : runner::BufferRole::Scratch;
        plan.buffers.push_back(std::move(b));
    }
    for (const auto &k : program.kernels)
        for (const auto &buffer : k.code.scratch) {
            if (plan.buffer(buffer.name))
                continue;
            auto elements = ir::evaluateSizeExpr(buffer.elements, sizes);
            if (!elements.ok())
                return elements.error();
            runner::BufferSpec b;
            b.name = buffer.name;
            b.dtype = buffer.dtype;
            b.count = static_cast<std::uint64_t>(*elements);
            b.role = runner::BufferRole::Scratch;
            if (buffer.zeroed)
                b.init.kind = runner::BufferInit::Kind::Zero;
            plan.buffers.push_back(std::move(b));
        }
    for (const auto &b : carried.buffers)
        plan.buffers.push_back(b);
    for (const LaunchStep &step : launchOrder(program.kernelStages(), carried)) {
        if (step.carried) {
            plan.launches.push_back(carried.launches[step.index].launch);
            continue;
        }
        const auto &k = program.kernels[step.index];
        runner::KernelLaunch launch;
        launch.kernel = k.code.name;
        unsigned grid[3];
        for (int d = 0; d < 3; ++d) {
            auto v = ir::evaluateSizeExpr(k.code.grid[static_cast<std::size_t>(d)], sizes);
            if (!v.ok())
                return v.error();
            if (*v < 1 || *v > 0x7fffffff)
                return makeError(ErrorKind::ResourceLimit, "kernel " + k.code.name + ": grid dimension " +
                                                               std::to_string(*v) + " is out of range");
            grid[d] = static_cast<unsigned>(*v);
        }
        launch.config.gridX = grid[0];
        launch.config.gridY = grid[1];
        launch.config.gridZ = grid[2];
        launch.config.blockX = static_cast<unsigned>(k.code.block[0]);
        launch.config.blockY = static_cast<unsigned>(k.code.block[1]);
        launch.config.blockZ = static_cast<unsigned>(k.code.block[2]);
        launch.config.dynamicSharedBytes = static_cast<unsigned>(k.code.dynamicSharedBytes);
        for (const auto &param : k.code.params) {
            if (param.tensor) {
                launch.args.push_back(runner::KernelArg::buffer(
                    param.tensorId >= 0 ? carried.bufferFor(graph.tensor(param.tensorId)->name) : param.scratch));
            } else {
                auto it = sizes.find(param.sizeVar);
                if (it == sizes.end())
                    return makeError(ErrorKind::InvalidArgument, "size " + param.sizeVar + " has no value");
                launch.args.push_back(runner::KernelArg::scalar(ir::DType::I32, it->second));
            }
        }
        plan.launches.push_back(std::move(launch));
    }
    return plan;
}

} // namespace stitch::codegen
