#pragma once
// What an agent sees when it decides: the observation vector its network reads.
//   Environment (question, problem, kernel group, decisions so far, each option's outcome) -> observe -> floats
// One layout for every agent, so one network architecture serves all four and one policy serves
// several architectures (the target's figures are features). The layout's schema (the decision
// keys it one-hot encodes) is stored with each checkpoint; a checkpoint of another schema is refused.

#include "core/agents/Environment.h"

#include <string>
#include <vector>

namespace stitch::agents {

/// The decision keys the observation encodes, in order: "fuse", "strategy", then every strategy's
/// decisions (decisionDefs order, each key once).
const std::vector<std::string> &observedKeys();
/// The observation's length.
int observationSize();
/// The schema as text: "stitchcuda-observation/1 " + the keys (stored in checkpoints).
std::string observationSchema();

/// The observation of the environment's current question (not done()).
std::vector<float> observe(const Environment &env);

} // namespace stitch::agents
