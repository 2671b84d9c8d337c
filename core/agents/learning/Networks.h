#pragma once
// The agents' policy networks and their PPO update, behind a small interface: LibTorch stays in
// Networks.cpp (each file that includes it costs ~20 s and 1.3 GB to compile, and its headers
// clash with Qt's `slots`).
//   Environment observation + legal mask -> AgentNetworks::evaluate -> probabilities, value
//   rollouts (Transition, advantages from Ppo.h) -> AgentNetworks::update -> UpdateStats
// One actor-critic network per learning agent (Stitch, Parallel mapping, Memory access,
// Instruction scheduling): an MLP from the observation to kMaxActions logits and a value. Illegal
// actions get a logit of -inf before the softmax (maskable PPO): probability 0, no gradient.
// Deterministic: a fixed seed and one intra-op thread give the same weights on every run.

#include "core/common/Result.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace stitch::agents {

/// Action slots of every policy head: the most candidates any decision has (threads_per_row: 6)
/// rounded up. Slots beyond a decision's candidates are masked.
inline constexpr int kMaxActions = 8;
/// The networks, in this order everywhere (checkpoint, trainer, trace).
inline constexpr int kLearningAgents = 4;
enum class LearningAgent { Stitch = 0, ParallelMapping = 1, MemoryAccess = 2, InstructionScheduling = 3 };

struct NetworkConfig {
    int observationSize = 0;
    int hidden = 128;          ///< two hidden layers of this width (tanh)
    std::uint64_t seed = 1;    ///< initial weights
};

struct PolicyOutput {
    std::vector<double> probabilities; ///< kMaxActions, 0 where masked, summing to 1
    double value = 0;                  ///< the critic's estimate of the return from this state
};

/// One decision of a rollout, as the trainer stores it.
struct Transition {
    int agent = 0;                     ///< LearningAgent
    std::vector<float> observation;    ///< observationSize
    std::vector<std::uint8_t> mask;    ///< kMaxActions, 1 = legal; at least one legal
    int action = 0;
    double logProb = 0;                ///< log pi_old(action) when it was taken
    double value = 0;                  ///< V_old(s)
    double advantage = 0;              ///< GAE, filled by the trainer
    double ret = 0;                    ///< advantage + value: the critic's target
};

/// An imitation example (retraining toward a user's override that won): cross-entropy toward
/// `action` with weight `weight`, added to the PPO loss.
struct ImitationExample {
    int agent = 0;
    std::vector<float> observation;
    std::vector<std::uint8_t> mask;
    int action = 0;
    double weight = 1;
};

/// Stable-Baselines3 / CleanRL defaults.
struct PpoConfig {
    double learningRate = 3e-4;
    double clip = 0.2;
    double valueCoef = 0.5;
    double entropyCoef = 0.01;
    double maxGradNorm = 0.5;
    double imitationCoef = 1.0;
    int epochs = 4;
    int minibatch = 64;
    bool normalizeAdvantages = true;   ///< per minibatch
};

/// What an update did, averaged over its minibatches: tells a broken update from a slow one.
struct UpdateStats {
    double policyLoss = 0, valueLoss = 0, entropy = 0, approxKl = 0, clipFraction = 0;
    double explainedVariance = 0, imitationLoss = 0;
    int samples = 0;
};

class AgentNetworks {
public:
    /// Fresh networks (random weights from config.seed).
    static std::unique_ptr<AgentNetworks> create(const NetworkConfig &config);
    /// Reads a checkpoint written by save. A missing, truncated or corrupt file, another format
    /// version, or another observation size than `expectedObservationSize` (when > 0) is an error
    /// naming the file and what is wrong; nothing is half-loaded.
    static Result<std::unique_ptr<AgentNetworks>> load(const std::string &path, int expectedObservationSize = 0);

    virtual ~AgentNetworks() = default;
    virtual const NetworkConfig &config() const = 0;
    /// Free-form text stored with the checkpoint (the trainer puts its command, seed, episodes, the
    /// feature schema as JSON); round-trips through save/load.
    virtual std::string metadata() const = 0;
    virtual void setMetadata(const std::string &json) = 0;

    /// Saves weights, optimizer state and metadata atomically (write a temporary file, rename).
    virtual Status save(const std::string &path) const = 0;

    /// The policy of `agent` at one observation; no gradient. `mask` has kMaxActions entries with at
    /// least one legal.
    virtual PolicyOutput evaluate(int agent, const std::vector<float> &observation,
                                  const std::vector<std::uint8_t> &mask) const = 0;

    /// PPO: `epochs` passes over the transitions in shuffled minibatches (shuffle from `seed`), per
    /// agent's network; clipped objective, value loss, entropy bonus, gradient-norm clip, Adam.
    /// `imitation` adds a weighted cross-entropy term (may be empty).
    virtual UpdateStats update(const std::vector<Transition> &batch, const std::vector<ImitationExample> &imitation,
                               const PpoConfig &config, std::uint64_t seed) = 0;
};

} // namespace stitch::agents
