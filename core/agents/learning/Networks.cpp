#include "core/agents/learning/Networks.h"

#include "core/agents/learning/CheckpointFile.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <mutex>
#include <random>
#include <sstream>

// Layout. Each network keeps its parameters as plain float tensors, weights stored [in, out] so that
// the training forward is addmm(bias, x, W) and the one-observation forward in evaluate() is a
// sequence of vectorizable axpy loops over the same storage (no dispatcher, no autograd, no
// allocation): a few microseconds per call.
//
// Checkpoint: the file's framing is CheckpointFile.h's (no LibTorch); its payload is a
// torch::serialize archive holding, per network, its eight parameter tensors ("net<k>") and its Adam
// state ("adam<k>").

namespace stitch::agents {
namespace {


std::uint64_t splitmix64(std::uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/// Sets the intra-op thread count to one, once: a single thread keeps reductions in one order, so a
/// seed gives the same weights on every run.
void useOneThread()
{
    static std::once_flag once;
    std::call_once(once, [] { at::set_num_threads(1); });
}

std::string torchMessage(const c10::Error &e)
{
    std::string s = e.what_without_backtrace();
    if (const auto nl = s.find('\n'); nl != std::string::npos)
        s.resize(nl);
    return s;
}

/// An orthogonal matrix [rows, cols] times gain, as torch.nn.init.orthogonal_ (QR of a Gaussian
/// matrix, signs fixed by R's diagonal), drawn from `gen` rather than the global generator.
torch::Tensor orthogonal(std::int64_t rows, std::int64_t cols, double gain, at::Generator &gen)
{
    torch::Tensor flat = torch::empty({rows, cols}, torch::kFloat64);
    flat.normal_(0.0, 1.0, gen);
    if (rows < cols)
        flat = flat.t();
    auto [q, r] = at::linalg_qr(flat, "reduced");
    q = q * torch::diagonal(r, 0, -2, -1).sign();
    if (rows < cols)
        q = q.t();
    return (q * gain).to(torch::kFloat32).contiguous();
}

struct Network {
    // Weights are [in, out]; biases [out].
    torch::Tensor w1, b1, w2, b2, wp, bp, wv, bv;
    std::unique_ptr<torch::optim::Adam> adam;

    std::vector<torch::Tensor> parameters() const { return {w1, b1, w2, b2, wp, bp, wv, bv}; }

    static constexpr std::array<const char *, 8> kNames = {"w1", "b1", "w2", "b2", "wp", "bp", "wv", "bv"};
    std::array<torch::Tensor *, 8> slots() { return {&w1, &b1, &w2, &b2, &wp, &bp, &wv, &bv}; }

    void init(int inputs, int hidden, at::Generator &gen)
    {
        const double sqrt2 = std::sqrt(2.0);
        // orthogonal() draws [out, in] like torch.nn.Linear's weight; stored transposed.
        const auto weight = [&](int in, int out, double gain) {
            return orthogonal(out, in, gain, gen).t().contiguous().requires_grad_(true);
        };
        const auto bias = [](int out) { return torch::zeros({out}, torch::kFloat32).requires_grad_(true); };
        w1 = weight(inputs, hidden, sqrt2);
        b1 = bias(hidden);
        w2 = weight(hidden, hidden, sqrt2);
        b2 = bias(hidden);
        wp = weight(hidden, kMaxActions, 0.01);
        bp = bias(kMaxActions);
        wv = weight(hidden, 1, 1.0);
        bv = bias(1);
        adam = std::make_unique<torch::optim::Adam>(parameters(), torch::optim::AdamOptions(3e-4).eps(1e-5));
    }

    /// Logits [N, kMaxActions] and values [N] of a batch of observations [N, inputs].
    std::pair<torch::Tensor, torch::Tensor> forward(const torch::Tensor &x) const
    {
        const torch::Tensor h1 = torch::tanh(torch::addmm(b1, x, w1));
        const torch::Tensor h2 = torch::tanh(torch::addmm(b2, h1, w2));
        return {torch::addmm(bp, h2, wp), torch::addmm(bv, h2, wv).squeeze(1)};
    }
};

/// Log-probabilities [N, kMaxActions] with -inf at the illegal slots (`illegal`: bool [N, kMaxActions]).
torch::Tensor maskedLogProbs(const torch::Tensor &logits, const torch::Tensor &illegal)
{
    return torch::log_softmax(logits.masked_fill(illegal, -std::numeric_limits<float>::infinity()), 1);
}

bool validMask(const std::vector<std::uint8_t> &mask, int action)
{
    if (mask.size() != static_cast<std::size_t>(kMaxActions) || action < 0 || action >= kMaxActions ||
        !mask[static_cast<std::size_t>(action)])
        return false;
    return true;
}

/// One agent's examples as tensors.
struct Samples {
    torch::Tensor obs;     ///< [N, O] float
    torch::Tensor illegal; ///< [N, A] bool
    torch::Tensor action;  ///< [N] long
    torch::Tensor a, b, c; ///< per-sample scalars (float): transitions: logProb, advantage, ret; imitation: weight
    std::int64_t size = 0;
};

template <typename Example>
Samples toSamples(const std::vector<const Example *> &examples, int observationSize,
                  const std::vector<std::array<double, 3>> &scalars)
{
    Samples s;
    const auto n = static_cast<std::int64_t>(examples.size());
    s.size = n;
    if (n == 0)
        return s;
    std::vector<float> obs(static_cast<std::size_t>(n) * static_cast<std::size_t>(observationSize));
    std::vector<std::uint8_t> illegal(static_cast<std::size_t>(n) * kMaxActions);
    std::vector<std::int64_t> action(static_cast<std::size_t>(n));
    std::array<std::vector<float>, 3> cols;
    for (auto &c : cols)
        c.resize(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < examples.size(); ++i) {
        const Example &e = *examples[i];
        std::copy(e.observation.begin(), e.observation.end(), obs.begin() + static_cast<std::ptrdiff_t>(i * observationSize));
        for (int k = 0; k < kMaxActions; ++k)
            illegal[i * kMaxActions + static_cast<std::size_t>(k)] = e.mask[static_cast<std::size_t>(k)] ? 0 : 1;
        action[i] = e.action;
        for (std::size_t k = 0; k < 3; ++k)
            cols[k][i] = static_cast<float>(scalars[i][k]);
    }
    s.obs = torch::from_blob(obs.data(), {n, observationSize}, torch::kFloat32).clone();
    s.illegal = torch::from_blob(illegal.data(), {n, kMaxActions}, torch::kUInt8).to(torch::kBool);
    s.action = torch::from_blob(action.data(), {n}, torch::kInt64).clone();
    s.a = torch::from_blob(cols[0].data(), {n}, torch::kFloat32).clone();
    s.b = torch::from_blob(cols[1].data(), {n}, torch::kFloat32).clone();
    s.c = torch::from_blob(cols[2].data(), {n}, torch::kFloat32).clone();
    return s;
}

/// Fisher-Yates with our own draw, so the order depends only on the seed (std::shuffle's algorithm
/// is the library's choice).
void shuffle(std::vector<std::int64_t> &v, std::mt19937_64 &rng)
{
    for (std::size_t i = v.size(); i > 1; --i) {
        const std::size_t j = static_cast<std::size_t>(rng() % i);
        std::swap(v[i - 1], v[j]);
    }
}

/// out[0, n) += sum over j < rows of x[j] * w[j, 0, n) (w row-major), four rows at a time so that
/// `out` is loaded and stored once per four rows; the inner loops vectorize. Groups of four zero
/// inputs (sparse features) are skipped.
void accumulate(float *__restrict out, const float *__restrict x, std::size_t rows, const float *__restrict w,
                std::size_t n)
{
    std::size_t j = 0;
    for (; j + 4 <= rows; j += 4) {
        const float x0 = x[j], x1 = x[j + 1], x2 = x[j + 2], x3 = x[j + 3];
        if (x0 == 0.0f && x1 == 0.0f && x2 == 0.0f && x3 == 0.0f)
            continue;
        const float *__restrict r0 = w + j * n;
        const float *__restrict r1 = r0 + n;
        const float *__restrict r2 = r1 + n;
        const float *__restrict r3 = r2 + n;
        for (std::size_t i = 0; i < n; ++i)
            out[i] += x0 * r0[i] + x1 * r1[i] + x2 * r2[i] + x3 * r3[i];
    }
    for (; j < rows; ++j) {
        const float x0 = x[j];
        const float *__restrict r0 = w + j * n;
        for (std::size_t i = 0; i < n; ++i)
            out[i] += x0 * r0[i];
    }
}

class TorchAgentNetworks final : public AgentNetworks {
public:
    explicit TorchAgentNetworks(const NetworkConfig &config) : m_config(config)
    {
        torch::NoGradGuard noGrad;
        at::Generator gen = at::detail::createCPUGenerator(splitmix64(config.seed));
        for (Network &n : m_nets)
            n.init(config.observationSize, config.hidden, gen);
    }

    const NetworkConfig &config() const override { return m_config; }
    std::string metadata() const override { return m_metadata; }
    void setMetadata(const std::string &json) override { m_metadata = json; }

    Status save(const std::string &path) const override;
    PolicyOutput evaluate(int agent, const std::vector<float> &observation,
                          const std::vector<std::uint8_t> &mask) const override;
    UpdateStats update(const std::vector<Transition> &batch, const std::vector<ImitationExample> &imitation,
                       const PpoConfig &config, std::uint64_t seed) override;

    std::string payload() const;
    void readPayload(const std::string &bytes);

private:
    NetworkConfig m_config;
    std::string m_metadata;
    std::array<Network, kLearningAgents> m_nets;
};

PolicyOutput TorchAgentNetworks::evaluate(int agent, const std::vector<float> &observation,
                                          const std::vector<std::uint8_t> &mask) const
{
    PolicyOutput out;
    out.probabilities.assign(kMaxActions, 0.0);
    std::array<bool, kMaxActions> legal{};
    int legalCount = 0;
    for (int k = 0; k < kMaxActions; ++k) {
        legal[static_cast<std::size_t>(k)] = static_cast<std::size_t>(k) < mask.size() && mask[static_cast<std::size_t>(k)];
        legalCount += legal[static_cast<std::size_t>(k)] ? 1 : 0;
    }
    if (legalCount == 0) { // outside the contract: keep the result a distribution
        legal.fill(true);
        legalCount = kMaxActions;
    }
    if (agent < 0 || agent >= kLearningAgents) { // outside the contract: uniform over the legal slots
        for (int k = 0; k < kMaxActions; ++k)
            if (legal[static_cast<std::size_t>(k)])
                out.probabilities[static_cast<std::size_t>(k)] = 1.0 / legalCount;
        return out;
    }

    const Network &n = m_nets[static_cast<std::size_t>(agent)];
    const auto hidden = static_cast<std::size_t>(m_config.hidden);
    const std::size_t inputs = std::min(observation.size(), static_cast<std::size_t>(m_config.observationSize));
    const float *w1 = n.w1.data_ptr<float>();
    const float *b1 = n.b1.data_ptr<float>();
    const float *w2 = n.w2.data_ptr<float>();
    const float *b2 = n.b2.data_ptr<float>();
    const float *wp = n.wp.data_ptr<float>();
    const float *bp = n.bp.data_ptr<float>();
    const float *wv = n.wv.data_ptr<float>();
    const float *bv = n.bv.data_ptr<float>();

    thread_local std::vector<float> h1, h2;
    h1.resize(hidden);
    h2.resize(hidden);
    float *__restrict a1 = h1.data();
    float *__restrict a2 = h2.data();

    std::copy(b1, b1 + hidden, a1);
    accumulate(a1, observation.data(), inputs, w1, hidden);
    for (std::size_t i = 0; i < hidden; ++i)
        a1[i] = std::tanh(a1[i]);
    std::copy(b2, b2 + hidden, a2);
    accumulate(a2, a1, hidden, w2, hidden);
    for (std::size_t i = 0; i < hidden; ++i)
        a2[i] = std::tanh(a2[i]);

    std::array<float, kMaxActions> logits;
    std::copy(bp, bp + kMaxActions, logits.begin());
    float value = bv[0];
    for (std::size_t j = 0; j < hidden; ++j) {
        const float x = a2[j];
        const float *row = wp + j * kMaxActions;
        for (std::size_t k = 0; k < static_cast<std::size_t>(kMaxActions); ++k)
            logits[k] += x * row[k];
        value += x * wv[j];
    }

    double maxLogit = -std::numeric_limits<double>::infinity();
    for (std::size_t k = 0; k < static_cast<std::size_t>(kMaxActions); ++k)
        if (legal[k])
            maxLogit = std::max(maxLogit, static_cast<double>(logits[k]));
    double sum = 0;
    for (std::size_t k = 0; k < static_cast<std::size_t>(kMaxActions); ++k)
        if (legal[k]) {
            out.probabilities[k] = std::exp(static_cast<double>(logits[k]) - maxLogit);
            sum += out.probabilities[k];
        }
    for (std::size_t k = 0; k < static_cast<std::size_t>(kMaxActions); ++k)
        out.probabilities[k] /= sum; // masked slots stay exactly 0
    out.value = value;
    return out;
}

UpdateStats TorchAgentNetworks::update(const std::vector<Transition> &batch,
                                       const std::vector<ImitationExample> &imitation, const PpoConfig &config,
                                       std::uint64_t seed)
{
    UpdateStats stats;
    const auto obsSize = static_cast<std::size_t>(m_config.observationSize);

    // Well-formed transitions only: a wrong size or an illegal action would make the loss NaN.
    std::array<std::vector<const Transition *>, kLearningAgents> byAgent;
    std::array<std::vector<const ImitationExample *>, kLearningAgents> imitationByAgent;
    for (const Transition &t : batch)
        if (t.agent >= 0 && t.agent < kLearningAgents && t.observation.size() == obsSize && validMask(t.mask, t.action) &&
            std::isfinite(t.logProb) && std::isfinite(t.advantage) && std::isfinite(t.ret))
            byAgent[static_cast<std::size_t>(t.agent)].push_back(&t);
    for (const ImitationExample &e : imitation)
        if (e.agent >= 0 && e.agent < kLearningAgents && e.observation.size() == obsSize && validMask(e.mask, e.action) &&
            std::isfinite(e.weight))
            imitationByAgent[static_cast<std::size_t>(e.agent)].push_back(&e);

    // Explained variance of the critic's values at rollout time (before this update), CleanRL's.
    {
        double n = 0, sumY = 0, sumY2 = 0, sumD = 0, sumD2 = 0;
        for (const auto &agentBatch : byAgent)
            for (const Transition *t : agentBatch) {
                const double d = t->ret - t->value;
                n += 1;
                sumY += t->ret;
                sumY2 += t->ret * t->ret;
                sumD += d;
                sumD2 += d * d;
            }
        if (n > 0) {
            const double varY = sumY2 / n - (sumY / n) * (sumY / n);
            const double varD = sumD2 / n - (sumD / n) * (sumD / n);
            stats.explainedVariance = varY > 1e-12 ? 1.0 - varD / varY : 0.0;
        }
        stats.samples = static_cast<int>(n);
    }

    double steps = 0, imitationSteps = 0;
    try {
        for (int agent = 0; agent < kLearningAgents; ++agent) {
            const auto &transitions = byAgent[static_cast<std::size_t>(agent)];
            const auto &examples = imitationByAgent[static_cast<std::size_t>(agent)];
            if ((transitions.empty() && examples.empty()) || config.epochs <= 0)
                continue;
            Network &net = m_nets[static_cast<std::size_t>(agent)];
            for (auto &group : net.adam->param_groups())
                static_cast<torch::optim::AdamOptions &>(group.options()).lr(config.learningRate);

            std::vector<std::array<double, 3>> scalars;
            scalars.reserve(transitions.size());
            for (const Transition *t : transitions)
                scalars.push_back({t->logProb, t->advantage, t->ret});
            const Samples all = toSamples(transitions, m_config.observationSize, scalars);
            scalars.clear();
            for (const ImitationExample *e : examples)
                scalars.push_back({e->weight, 0.0, 0.0});
            const Samples imit = toSamples(examples, m_config.observationSize, scalars);

            const auto step = [&](const torch::Tensor *mbIndex) {
                torch::Tensor loss = torch::zeros({}, torch::kFloat32);
                if (mbIndex) {
                    const torch::Tensor obs = all.obs.index_select(0, *mbIndex);
                    const torch::Tensor illegal = all.illegal.index_select(0, *mbIndex);
                    const torch::Tensor action = all.action.index_select(0, *mbIndex);
                    const torch::Tensor oldLogProb = all.a.index_select(0, *mbIndex);
                    torch::Tensor advantage = all.b.index_select(0, *mbIndex);
                    const torch::Tensor ret = all.c.index_select(0, *mbIndex);

                    const auto [logits, value] = net.forward(obs);
                    const torch::Tensor logProbs = maskedLogProbs(logits, illegal);
                    const torch::Tensor newLogProb = logProbs.gather(1, action.unsqueeze(1)).squeeze(1);
                    // Entropy over the legal actions only: 0 * -inf would be NaN.
                    const torch::Tensor entropy =
                        -(logProbs.exp() * logProbs.masked_fill(illegal, 0.0)).sum(1).mean();
                    const torch::Tensor logRatio = newLogProb - oldLogProb;
                    const torch::Tensor ratio = logRatio.exp();
                    if (config.normalizeAdvantages && advantage.size(0) > 1)
                        advantage = (advantage - advantage.mean()) / (advantage.std() + 1e-8);
                    const torch::Tensor policyLoss =
                        torch::maximum(-advantage * ratio,
                                   -advantage * torch::clamp(ratio, 1.0 - config.clip, 1.0 + config.clip))
                            .mean();
                    const torch::Tensor valueLoss = 0.5 * (value - ret).pow(2).mean();
                    loss = policyLoss - config.entropyCoef * entropy + config.valueCoef * valueLoss;

                    torch::NoGradGuard noGrad;
                    stats.policyLoss += policyLoss.item<double>();
                    stats.valueLoss += valueLoss.item<double>();
                    stats.entropy += entropy.item<double>();
                    stats.approxKl += ((ratio - 1.0) - logRatio).mean().item<double>();
                    stats.clipFraction += ((ratio - 1.0).abs() > config.clip).to(torch::kFloat64).mean().item<double>();
                    steps += 1;
                }
                if (imit.size > 0) {
                    const torch::Tensor logProbs = maskedLogProbs(net.forward(imit.obs).first, imit.illegal);
                    const torch::Tensor crossEntropy = -logProbs.gather(1, imit.action.unsqueeze(1)).squeeze(1);
                    const torch::Tensor imitationLoss = (imit.a * crossEntropy).mean();
                    loss = loss + config.imitationCoef * imitationLoss;
                    stats.imitationLoss += imitationLoss.item<double>();
                    imitationSteps += 1;
                }
                net.adam->zero_grad();
                loss.backward();
                if (config.maxGradNorm > 0)
                    torch::nn::utils::clip_grad_norm_(net.parameters(), config.maxGradNorm);
                net.adam->step();
            };

            std::mt19937_64 rng(splitmix64(seed ^ splitmix64(static_cast<std::uint64_t>(agent) + 1)));
            std::vector<std::int64_t> order(static_cast<std::size_t>(all.size));
            for (std::size_t i = 0; i < order.size(); ++i)
                order[i] = static_cast<std::int64_t>(i);
            const std::size_t minibatch =
                config.minibatch > 0 ? static_cast<std::size_t>(config.minibatch) : std::max<std::size_t>(order.size(), 1);
            for (int epoch = 0; epoch < config.epochs; ++epoch) {
                if (order.empty()) { // imitation only: one step per epoch over all examples
                    step(nullptr);
                    continue;
                }
                shuffle(order, rng);
                for (std::size_t start = 0; start < order.size(); start += minibatch) {
                    const auto count = static_cast<std::int64_t>(std::min(minibatch, order.size() - start));
                    const torch::Tensor index =
                        torch::from_blob(order.data() + start, {count}, torch::kInt64).clone();
                    step(&index);
                }
            }
        }
    } catch (const std::exception &) {
        // Outside the contract (torch failed): report a broken update rather than throw.
        const double nan = std::numeric_limits<double>::quiet_NaN();
        stats.policyLoss = stats.valueLoss = stats.entropy = stats.approxKl = stats.clipFraction = nan;
        stats.imitationLoss = nan;
        return stats;
    }

    if (steps > 0) {
        stats.policyLoss /= steps;
        stats.valueLoss /= steps;
        stats.entropy /= steps;
        stats.approxKl /= steps;
        stats.clipFraction /= steps;
    }
    if (imitationSteps > 0)
        stats.imitationLoss /= imitationSteps;
    return stats;
}

std::string TorchAgentNetworks::payload() const
{
    torch::serialize::OutputArchive archive;
    for (std::size_t k = 0; k < m_nets.size(); ++k) {
        const Network &n = m_nets[k];
        torch::serialize::OutputArchive weights(archive.compilation_unit());
        const std::vector<torch::Tensor> parameters = n.parameters();
        for (std::size_t i = 0; i < parameters.size(); ++i)
            weights.write(Network::kNames[i], parameters[i].detach());
        archive.write("net" + std::to_string(k), weights);
        torch::serialize::OutputArchive optimizer(archive.compilation_unit());
        n.adam->save(optimizer);
        archive.write("adam" + std::to_string(k), optimizer);
    }
    std::ostringstream os;
    archive.save_to(os);
    return std::move(os).str();
}

void TorchAgentNetworks::readPayload(const std::string &bytes)
{
    torch::serialize::InputArchive archive;
    archive.load_from(bytes.data(), bytes.size());
    torch::NoGradGuard noGrad;
    for (std::size_t k = 0; k < m_nets.size(); ++k) {
        Network &n = m_nets[k];
        torch::serialize::InputArchive weights;
        archive.read("net" + std::to_string(k), weights);
        const auto slots = n.slots();
        for (std::size_t i = 0; i < slots.size(); ++i) {
            torch::Tensor t;
            weights.read(Network::kNames[i], t);
            if (t.scalar_type() != torch::kFloat32 || !t.sizes().equals(slots[i]->sizes()))
                throw std::runtime_error(std::string("tensor ") + Network::kNames[i] + " of network " +
                                         std::to_string(k) + " has the wrong shape or type");
            slots[i]->copy_(t); // in place: the optimizer keeps referring to the same tensors
        }
        torch::serialize::InputArchive optimizer;
        archive.read("adam" + std::to_string(k), optimizer);
        n.adam->load(optimizer);
    }
}

Status TorchAgentNetworks::save(const std::string &path) const
{
    std::string bytes;
    try {
        bytes = payload();
    } catch (const c10::Error &e) {
        return makeError(ErrorKind::Io, path + ": cannot serialize the networks: " + torchMessage(e));
    } catch (const std::exception &e) {
        return makeError(ErrorKind::Io, path + ": cannot serialize the networks: " + e.what());
    }
    return writeCheckpointFile(path, {m_config, m_metadata}, bytes);
}

} // namespace

std::unique_ptr<AgentNetworks> AgentNetworks::create(const NetworkConfig &config)
{
    if (config.observationSize <= 0 || config.observationSize > kMaxObservationSize || config.hidden <= 0 ||
        config.hidden > kMaxHidden)
        return nullptr;
    try {
        useOneThread();
        return std::make_unique<TorchAgentNetworks>(config);
    } catch (const std::exception &) {
        return nullptr;
    }
}

Result<std::unique_ptr<AgentNetworks>> AgentNetworks::load(const std::string &path, int expectedObservationSize)
{
    auto file = readCheckpointFile(path, expectedObservationSize);
    if (!file)
        return file.error();
    const auto &[header, payload] = *file;
    const NetworkConfig &config = header.config;
    const std::string &metadata = header.metadata;
    const auto parseError = [&](const std::string &what) { return makeError(ErrorKind::Parse, path + what); };
    try {
        useOneThread();
        auto networks = std::make_unique<TorchAgentNetworks>(config);
        networks->readPayload(payload);
        networks->setMetadata(metadata);
        return std::unique_ptr<AgentNetworks>(std::move(networks));
    } catch (const c10::Error &e) {
        return parseError(": cannot read the networks: " + torchMessage(e));
    } catch (const std::exception &e) {
        return parseError(": cannot read the networks: " + std::string(e.what()));
    }
}

} // namespace stitch::agents
