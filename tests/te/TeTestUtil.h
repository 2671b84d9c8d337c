#pragma once
// Helpers shared by the .te tests: reading examples and making random non-zero inputs.

#include "core/frontend/Lift.h"
#include "core/ir/Interpreter.h"

#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <sstream>
#include <string>

namespace stitch::tetest {

inline std::string examplePath(const std::string &name)
{
    return std::string(STITCHCUDA_SOURCE_DIR) + "/examples/" + name;
}

inline std::string readText(const std::string &path)
{
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

/// Lifts an example and fails the test (returning an empty program) if it does not lift cleanly.
inline frontend::LiftedProgram liftExample(const std::string &name)
{
    const std::string path = examplePath(name);
    auto lifted = frontend::liftFile(readText(path), path);
    if (!lifted) {
        ADD_FAILURE() << name << ": " << lifted.error().toString();
        for (const Diagnostic &d : lifted.error().diagnostics)
            ADD_FAILURE() << d.toString();
        return frontend::LiftedProgram{{}, {}, ir::Graph(), {}, {}, {}, {}};
    }
    return std::move(lifted).value();
}

/// Values in +-[0.25, 1.25): never zero, so a dropped term or a wrong index shows in the result.
inline ir::TensorData randomNonZero(std::size_t count, std::mt19937_64 &rng)
{
    std::uniform_real_distribution<double> magnitude(0.25, 1.25);
    std::bernoulli_distribution negative(0.5);
    ir::TensorData data(count);
    for (double &x : data)
        x = negative(rng) ? -magnitude(rng) : magnitude(rng);
    return data;
}

} // namespace stitch::tetest
