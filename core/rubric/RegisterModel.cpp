#include "core/rubric/RegisterModel.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace stitch::resources {
const char *registerModelSm90();
}

namespace stitch::rubric {

Result<RegisterModel> parseRegisterModel(const std::string &text)
{
    const auto j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object())
        return Error{ErrorKind::Parse, "register model: not a JSON object"};
    if (j.value("schema", "") != "stitchcuda-register-model/1")
        return Error{ErrorKind::Parse, "register model: schema is not stitchcuda-register-model/1"};
    RegisterModel m;
    m.arch = j.value("arch", "");
    const auto w = j.find("weights");
    if (w == j.end() || !w->is_object())
        return Error{ErrorKind::Parse, "register model: weights: expected an object"};
    const std::pair<const char *, double *> names[] = {
        {"constant", &m.constant}, {"thread_m+thread_n", &m.fragments}, {"block_k", &m.blockK},
        {"stages", &m.stages},     {"copy=async", &m.async},            {"vector", &m.vector},
        {"stream_k=on", &m.streamK}, {"epilogue", &m.epilogue}};
    for (const auto &[name, field] : names) {
        const auto v = w->find(name);
        if (v == w->end() || !v->is_number())
            return Error{ErrorKind::Parse, std::string("register model: weights.") + name + ": expected a number"};
        *field = v->get<double>();
    }
    return m;
}

const RegisterModel &builtinRegisterModel()
{
    static const RegisterModel model = [] {
        auto m = parseRegisterModel(resources::registerModelSm90());
        if (!m) // the embedded file is checked by the tests; a broken build must not pass silently
            std::abort();
        return *m;
    }();
    return model;
}

std::optional<int> predictGemmRegisters(const RegisterModel &m, const schedule::KernelGroup &g, int threads)
{
    if (g.strategy != schedule::Strategy::Gemm || g.value("math") != 0 || threads <= 0)
        return std::nullopt;
    const int tm = g.value("thread_m"), tn = g.value("thread_n");
    const double demand = tm * tn + m.constant + m.fragments * (tm + tn) + m.blockK * g.value("block_k") +
                          m.stages * g.value("stages") + m.async * (g.value("copy") == 1 ? 1 : 0) +
                          m.vector * g.value("vector") + m.streamK * (g.value("stream_k") == 1 ? 1 : 0) +
                          m.epilogue * (g.ops.size() > 1 ? 1 : 0);
    // ptxas holds the kernel to __launch_bounds__(threads, min_blocks): 64 Ki registers per SM.
    const int minBlocks = std::max(g.value("min_blocks"), 1);
    const int cap = std::min(255, 65536 / (threads * minBlocks) / 8 * 8);
    return std::clamp(static_cast<int>(std::lround(demand)), 16, std::max(cap, 16));
}

} // namespace stitch::rubric
