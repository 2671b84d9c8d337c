#pragma once
// Helpers of the agents' tests (test_agents.cpp, test_agents_search.cpp): the sm_90 limits, a
// held-out-style problem from its spec, an evaluator with its rubric.

#include "core/agents/Evaluator.h"
#include "core/agents/Problems.h"
#include "core/arch/ArchDatabase.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace stitch::agents::testing {

inline const ArchLimits &sm90() { return *ArchDatabase::builtin().arch("sm_90"); }

inline std::unique_ptr<TrainingProblem> problem(const std::string &spec)
{
    auto s = parseProblemSpec(spec);
    EXPECT_TRUE(s.ok()) << spec;
    auto p = makeProblem(*s, sm90());
    EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().message);
    return std::move(*p);
}

struct Fixture {
    rubric::Rubric rubric;
    Evaluator evaluator{rubric};
};

} // namespace stitch::agents::testing
