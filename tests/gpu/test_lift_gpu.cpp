// The lifted graph means what the original program does: for every liftable corpus program, the
// ORIGINAL kernels, compiled by NVRTC and launched in the host program's order with the grid and
// block the lifter read from it, leave in their buffers what the CPU interpreter computes from the
// lifted graph. Sizes are the corpus's small test sizes (#defines rewritten in the source), inputs
// random, outputs NaN-poisoned first so an element no thread writes shows up.
#include "tests/lift/LiftCorpus.h"

#include "core/cuda/DriverApi.h"
#include "core/cuda/SourceCompiler.h"
#include "core/frontend/CudaSourceIndex.h"
#include "core/ir/Interpreter.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

using namespace stitch;
using namespace stitch::testing;
using namespace stitch::cuda;
using frontend::cudalift::BufferPlan;
using frontend::cudalift::HostEvent;
using frontend::cudalift::KernelArgument;

namespace {

std::shared_ptr<DriverApi> driverOrSkip()
{
    auto api = DriverApi::load();
    if (!api)
        return nullptr;
    auto devs = (*api)->devices();
    if (!devs || devs->empty())
        return nullptr;
    return *api;
}

/// Host copy of one buffer, as the bytes the device holds (float32 or int32 only).
struct HostBuffer {
    ir::DType dtype = ir::DType::F32;
    std::vector<double> values;

    std::vector<char> bytes() const
    {
        std::vector<char> out(values.size() * 4);
        for (std::size_t i = 0; i < values.size(); ++i) {
            if (dtype == ir::DType::F32) {
                const float f = static_cast<float>(values[i]);
                std::memcpy(&out[i * 4], &f, 4);
            } else {
                const std::int32_t v = static_cast<std::int32_t>(values[i]);
                std::memcpy(&out[i * 4], &v, 4);
            }
        }
        return out;
    }
};

std::vector<double> fromBytes(const std::vector<char> &bytes, ir::DType dtype)
{
    std::vector<double> out(bytes.size() / 4);
    for (std::size_t i = 0; i < out.size(); ++i) {
        if (dtype == ir::DType::F32) {
            float f = 0;
            std::memcpy(&f, &bytes[i * 4], 4);
            out[i] = f;
        } else {
            std::int32_t v = 0;
            std::memcpy(&v, &bytes[i * 4], 4);
            out[i] = v;
        }
    }
    return out;
}

/// One kernel argument as cuLaunchKernel wants it: the value's bytes, typed by the parameter.
std::vector<char> argumentBytes(const KernelArgument &a, const std::string &paramType, std::uint64_t bufferAddress,
                                const ir::SizeBindings &sizes, std::string &error)
{
    std::vector<char> out(8, 0);
    if (a.kind == KernelArgument::Kind::Buffer) {
        std::memcpy(out.data(), &bufferAddress, 8);
        return out;
    }
    const bool floating = paramType.find("float") != std::string::npos || paramType.find("double") != std::string::npos;
    double value = 0.0;
    if (a.scalar.kind() == ir::ExprKind::FloatConst) {
        value = a.scalar.floatValue();
    } else {
        auto v = ir::evaluateSizeExpr(a.scalar, sizes);
        if (!v) {
            error = v.error().toString();
            return out;
        }
        value = static_cast<double>(*v);
    }
    if (paramType.find("double") != std::string::npos) {
        std::memcpy(out.data(), &value, 8);
    } else if (floating) {
        const float f = static_cast<float>(value);
        std::memcpy(out.data(), &f, 4);
    } else if (paramType.find("long") != std::string::npos || paramType.find("size_t") != std::string::npos) {
        const std::int64_t v = static_cast<std::int64_t>(value);
        std::memcpy(out.data(), &v, 8);
    } else {
        const std::int32_t v = static_cast<std::int32_t>(value);
        std::memcpy(out.data(), &v, 4);
    }
    return out;
}

class LiftGpu : public ::testing::TestWithParam<CorpusProgram> {};

TEST_P(LiftGpu, OriginalKernelsMatchTheLiftedGraph)
{
    auto api = driverOrSkip();
    if (!api)
        GTEST_SKIP() << "no CUDA driver or GPU on this machine";
    const std::string name = GetParam().name;
    const std::string original = readTextFile(corpusPath(name));
    auto lifted = frontend::cudalift::liftCudaProgramDetailed(original, name + ".cu");
    ASSERT_TRUE(lifted.ok()) << lifted.error().toString();
    const ir::SizeBindings sizes = testBindings(*lifted, GetParam().small);
    const std::string source = resizeProgram(original, lifted->sizes, GetParam().small);

    auto ctx = api->createContext(0);
    ASSERT_TRUE(ctx.ok()) << ctx.error().toString();
    Context &c = **ctx;
    CompileOptions co;
    co.arch = c.device().arch();
    co.fileName = name + ".cu";
    co.defines = hostConstantDefines();
    auto compiled = compileProgram(source, co);
    ASSERT_TRUE(compiled.ok()) << compiled.error().toString();
    auto module = c.loadModule(compiled->cubin);
    ASSERT_TRUE(module.ok()) << module.error().toString();
    const frontend::SourceIndex index = frontend::indexCudaSource(source, co.fileName);
    const auto entries = ptxEntryNames(compiled->ptx);

    // Inputs: random, non-zero, one set per buffer the graph reads as an input.
    std::mt19937 rng(static_cast<unsigned>(std::hash<std::string>{}(name)) ^ 0x5eedu);
    std::uniform_real_distribution<double> magnitude(0.25, 1.25);
    std::bernoulli_distribution negative(0.4);
    std::vector<HostBuffer> host(lifted->buffers.size());
    std::vector<DeviceBuffer> device;
    ir::TensorValues graphInputs;
    for (std::size_t b = 0; b < lifted->buffers.size(); ++b) {
        const BufferPlan &plan = lifted->buffers[b];
        ASSERT_TRUE(plan.dtype == ir::DType::F32 || plan.dtype == ir::DType::I32) << plan.name;
        auto count = ir::evaluateSizeExpr(plan.elements, sizes);
        ASSERT_TRUE(count.ok()) << count.error().toString();
        host[b].dtype = plan.dtype;
        host[b].values.assign(static_cast<std::size_t>(*count), 0.0);
        if (!plan.inputTensor.empty()) {
            for (double &x : host[b].values)
                x = plan.dtype == ir::DType::F32 ? static_cast<float>((negative(rng) ? -1.0 : 1.0) * magnitude(rng))
                                                 : std::floor(magnitude(rng) * 40) + 1;
            graphInputs[plan.inputTensor] = host[b].values;
        }
        auto buffer = c.allocate(std::max<std::size_t>(4, host[b].values.size() * 4));
        ASSERT_TRUE(buffer.ok()) << buffer.error().toString();
        ASSERT_TRUE(c.fill(*buffer, 0x7fc00000u).ok()); // quiet NaN: unwritten elements show
        device.push_back(std::move(*buffer));
    }

    // Replay the host program: copies in, memsets and launches, in its order.
    for (const HostEvent &ev : lifted->events) {
        const auto b = static_cast<std::size_t>(ev.buffer);
        switch (ev.kind) {
        case HostEvent::Kind::CopyIn:
        case HostEvent::Kind::HostWrite: {
            const std::vector<char> bytes = host[b].bytes();
            ASSERT_TRUE(c.upload(device[b], bytes.data(), bytes.size()).ok());
            break;
        }
        case HostEvent::Kind::Zero:
            ASSERT_TRUE(c.fill(device[b], 0u).ok());
            break;
        case HostEvent::Kind::Launch: {
            const auto &plan = lifted->launches.at(static_cast<std::size_t>(ev.launch));
            ASSERT_TRUE(plan.lifted) << plan.kernel;
            auto kernel = std::find_if(index.kernels.begin(), index.kernels.end(),
                                       [&](const frontend::KernelInfo &k) { return k.name == plan.kernel; });
            ASSERT_NE(kernel, index.kernels.end()) << plan.kernel;
            auto entry = entries.find(plan.kernel);
            ASSERT_NE(entry, entries.end()) << plan.kernel << " is not an entry of the PTX (" << entries.size()
                                            << " entries, " << compiled->kernels.size() << " in the ptxas report)";
            LaunchConfig lc;
            unsigned *dims[] = {&lc.gridX, &lc.gridY, &lc.gridZ, &lc.blockX, &lc.blockY, &lc.blockZ};
            for (std::size_t d = 0; d < 6; ++d) {
                auto v = ir::evaluateSizeExpr(d < 3 ? plan.grid[d] : plan.block[d - 3], sizes);
                ASSERT_TRUE(v.ok() && *v > 0) << plan.kernel << " launch dimension " << d;
                *dims[d] = static_cast<unsigned>(*v);
            }
            std::vector<std::vector<char>> storage;
            ASSERT_EQ(plan.arguments.size(), kernel->parameters.size());
            for (std::size_t a = 0; a < plan.arguments.size(); ++a) {
                const KernelArgument &arg = plan.arguments[a];
                std::uint64_t address = 0;
                if (arg.kind == KernelArgument::Kind::Buffer) {
                    auto offset = ir::evaluateSizeExpr(arg.pointer.offset, sizes);
                    ASSERT_TRUE(offset.ok());
                    address = device.at(static_cast<std::size_t>(arg.pointer.buffer)).address()
                        + static_cast<std::uint64_t>(*offset) * 4;
                }
                std::string error;
                storage.push_back(argumentBytes(arg, kernel->parameters[a].type, address, sizes, error));
                ASSERT_TRUE(error.empty()) << error;
            }
            std::vector<void *> args;
            for (auto &s : storage)
                args.push_back(s.data());
            auto st = (*module)->launch(entry->second, lc, args.data());
            ASSERT_TRUE(st.ok()) << plan.kernel << ": " << st.error().toString();
            break;
        }
        case HostEvent::Kind::CopyOut:
        case HostEvent::Kind::HostRead:
            break; // the host looks at the results; they are compared below
        default:
            FAIL() << "the corpus program has a host step this test does not replay";
        }
    }

    auto expected = ir::interpret(lifted->program.graph, sizes, graphInputs);
    ASSERT_TRUE(expected.ok()) << expected.error().toString();
    int compared = 0;
    for (std::size_t b = 0; b < lifted->buffers.size(); ++b) {
        const BufferPlan &plan = lifted->buffers[b];
        if (plan.outputTensor.empty())
            continue;
        std::vector<char> bytes(host[b].values.size() * 4);
        ASSERT_TRUE(c.download(bytes.data(), device[b], bytes.size()).ok());
        const std::vector<double> got = fromBytes(bytes, plan.dtype);
        const std::vector<double> &want = expected->at(plan.outputTensor);
        ASSERT_EQ(got.size(), want.size()) << plan.name;
        double num = 0, den = 0, worst = 0, scale = 0;
        for (std::size_t i = 0; i < got.size(); ++i) {
            ASSERT_FALSE(std::isnan(got[i])) << plan.name << "[" << i << "] was not written by the GPU";
            num += (got[i] - want[i]) * (got[i] - want[i]);
            den += want[i] * want[i];
            worst = std::max(worst, std::fabs(got[i] - want[i]));
            scale = std::max(scale, std::fabs(want[i]));
        }
        EXPECT_LE(std::sqrt(num / std::max(den, 1e-300)), 1e-5) << name << ": " << plan.name << " vs " << plan.outputTensor;
        EXPECT_LE(worst, 1e-4 * std::max(scale, 1.0)) << name << ": " << plan.name << " worst element";
        ++compared;
    }
    EXPECT_GT(compared, 0);
}

INSTANTIATE_TEST_SUITE_P(Corpus, LiftGpu, ::testing::ValuesIn(liftableCorpus()),
                         [](const ::testing::TestParamInfo<CorpusProgram> &info) { return info.param.name; });

} // namespace
