#include "core/agents/learning/Networks.h"
#include "core/common/Sha256.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <random>
#include <string>
#include <unistd.h>
#include <vector>

using namespace stitch;
using namespace stitch::agents;

namespace {

std::vector<std::uint8_t> maskOf(std::initializer_list<int> legal)
{
    std::vector<std::uint8_t> mask(kMaxActions, 0);
    for (int a : legal)
        mask[static_cast<std::size_t>(a)] = 1;
    return mask;
}

std::vector<float> randomObservation(int size, std::mt19937_64 &rng)
{
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::vector<float> obs(static_cast<std::size_t>(size));
    for (float &x : obs)
        x = u(rng);
    return obs;
}

int sample(const std::vector<double> &p, std::mt19937_64 &rng)
{
    const double u = std::uniform_real_distribution<double>(0.0, 1.0)(rng);
    double acc = 0;
    int last = 0;
    for (int k = 0; k < kMaxActions; ++k) {
        if (p[static_cast<std::size_t>(k)] <= 0)
            continue;
        last = k;
        acc += p[static_cast<std::size_t>(k)];
        if (u < acc)
            return k;
    }
    return last;
}

/// A one-step bandit rollout: constant observation, reward 1 for action 2 only.
std::vector<Transition> banditRollout(const AgentNetworks &net, int agent, const std::vector<float> &obs,
                                      const std::vector<std::uint8_t> &mask, int n, std::mt19937_64 &rng)
{
    std::vector<Transition> batch;
    for (int i = 0; i < n; ++i) {
        const PolicyOutput out = net.evaluate(agent, obs, mask);
        Transition t;
        t.agent = agent;
        t.observation = obs;
        t.mask = mask;
        t.action = sample(out.probabilities, rng);
        t.logProb = std::log(out.probabilities[static_cast<std::size_t>(t.action)]);
        t.value = out.value;
        const double reward = t.action == 2 ? 1.0 : 0.0;
        t.advantage = reward - t.value;
        t.ret = reward;
        batch.push_back(std::move(t));
    }
    return batch;
}

/// Transitions for every agent over random observations and masks.
std::vector<Transition> mixedRollout(const AgentNetworks &net, int n, std::mt19937_64 &rng)
{
    std::vector<Transition> batch;
    const int obsSize = net.config().observationSize;
    for (int i = 0; i < n; ++i) {
        Transition t;
        t.agent = i % kLearningAgents;
        t.observation = randomObservation(obsSize, rng);
        t.mask.assign(kMaxActions, 0);
        for (auto &m : t.mask)
            m = (rng() % 3) != 0;
        t.mask[rng() % kMaxActions] = 1;
        const PolicyOutput out = net.evaluate(t.agent, t.observation, t.mask);
        t.action = sample(out.probabilities, rng);
        t.logProb = std::log(out.probabilities[static_cast<std::size_t>(t.action)]);
        t.value = out.value;
        const double reward = std::sin(t.observation[0] * 3.0 + t.action);
        t.advantage = reward - t.value;
        t.ret = reward;
        batch.push_back(std::move(t));
    }
    return batch;
}

void expectSameOutputs(const AgentNetworks &a, const AgentNetworks &b, std::uint64_t probeSeed)
{
    std::mt19937_64 rng(probeSeed);
    const auto mask = maskOf({0, 1, 3, 5, 6});
    for (int agent = 0; agent < kLearningAgents; ++agent)
        for (int i = 0; i < 5; ++i) {
            const auto obs = randomObservation(a.config().observationSize, rng);
            const PolicyOutput pa = a.evaluate(agent, obs, mask);
            const PolicyOutput pb = b.evaluate(agent, obs, mask);
            for (int k = 0; k < kMaxActions; ++k) // bitwise: EXPECT_EQ, not EXPECT_NEAR
                EXPECT_EQ(pa.probabilities[static_cast<std::size_t>(k)], pb.probabilities[static_cast<std::size_t>(k)])
                    << "agent " << agent << " slot " << k;
            EXPECT_EQ(pa.value, pb.value) << "agent " << agent;
        }
}

bool sameOutputs(const AgentNetworks &a, const AgentNetworks &b)
{
    std::mt19937_64 rng(99);
    const auto mask = maskOf({0, 1, 2, 3, 4, 5, 6, 7});
    for (int agent = 0; agent < kLearningAgents; ++agent) {
        const auto obs = randomObservation(a.config().observationSize, rng);
        const PolicyOutput pa = a.evaluate(agent, obs, mask);
        const PolicyOutput pb = b.evaluate(agent, obs, mask);
        if (pa.probabilities != pb.probabilities || pa.value != pb.value)
            return false;
    }
    return true;
}

std::string readFile(const std::filesystem::path &p)
{
    std::ifstream f(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

void writeFile(const std::filesystem::path &p, const std::string &bytes)
{
    std::ofstream f(p, std::ios::binary | std::ios::trunc);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

bool startsWith(const std::string &s, const std::string &prefix) { return s.rfind(prefix, 0) == 0; }

class NetworksFiles : public ::testing::Test {
protected:
    void SetUp() override
    {
        static int counter = 0;
        const auto *info = ::testing::UnitTest::GetInstance()->current_test_info();
        m_dir = std::filesystem::temp_directory_path() /
                ("stitch-networks-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + "-" + info->name());
        std::filesystem::create_directories(m_dir);
    }
    void TearDown() override
    {
        std::error_code ec;
        std::filesystem::remove_all(m_dir, ec);
    }

    /// A trained network (Adam has state) saved to `name`; returns its path.
    std::string savedCheckpoint(const std::string &name, int observationSize = 10)
    {
        auto net = AgentNetworks::create({observationSize, 16, 5});
        EXPECT_TRUE(net);
        std::mt19937_64 rng(3);
        PpoConfig ppo;
        ppo.minibatch = 8;
        net->update(mixedRollout(*net, 32, rng), {}, ppo, 1);
        net->setMetadata(R"({"command":"train","episodes":3})");
        const std::string path = (m_dir / name).string();
        const Status s = net->save(path);
        EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().toString());
        return path;
    }

    std::filesystem::path m_dir;
};

} // namespace

TEST(Networks, CreateRejectsInvalidConfig)
{
    EXPECT_EQ(AgentNetworks::create({0, 16, 1}), nullptr);
    EXPECT_EQ(AgentNetworks::create({8, 0, 1}), nullptr);
    EXPECT_NE(AgentNetworks::create({8, 16, 1}), nullptr);
}

TEST(Networks, MaskedSlotsGetExactlyZeroAndTheRestSumToOne)
{
    auto net = AgentNetworks::create({12, 32, 7});
    ASSERT_TRUE(net);
    std::mt19937_64 rng(11);
    for (int agent = 0; agent < kLearningAgents; ++agent)
        for (int i = 0; i < 50; ++i) {
            const auto obs = randomObservation(12, rng);
            std::vector<std::uint8_t> mask(kMaxActions);
            for (auto &m : mask)
                m = rng() % 2;
            mask[rng() % kMaxActions] = 1;
            const PolicyOutput out = net->evaluate(agent, obs, mask);
            ASSERT_EQ(out.probabilities.size(), static_cast<std::size_t>(kMaxActions));
            double sum = 0;
            for (int k = 0; k < kMaxActions; ++k) {
                const double p = out.probabilities[static_cast<std::size_t>(k)];
                if (mask[static_cast<std::size_t>(k)]) {
                    EXPECT_GT(p, 0.0);
                } else {
                    EXPECT_EQ(p, 0.0);
                }
                EXPECT_TRUE(std::isfinite(p));
                sum += p;
            }
            EXPECT_NEAR(sum, 1.0, 1e-12);
            EXPECT_TRUE(std::isfinite(out.value));
        }
    // One legal action: certainty.
    const PolicyOutput only = net->evaluate(2, randomObservation(12, rng), maskOf({6}));
    EXPECT_EQ(only.probabilities[6], 1.0);
}

TEST(Networks, FreshPolicyIsNearUniform)
{
    // Policy head gain 0.01: the initial policy barely prefers any action.
    auto net = AgentNetworks::create({12, 64, 3});
    std::mt19937_64 rng(1);
    const PolicyOutput out = net->evaluate(0, randomObservation(12, rng), maskOf({0, 1, 2, 3}));
    for (int k = 0; k < 4; ++k)
        EXPECT_NEAR(out.probabilities[static_cast<std::size_t>(k)], 0.25, 0.05);
}

TEST(Networks, BanditUpdateRaisesTheRewardedAction)
{
    auto net = AgentNetworks::create({6, 64, 21});
    ASSERT_TRUE(net);
    const std::vector<float> obs(6, 0.5f);
    const auto mask = maskOf({0, 1, 2, 4, 5});
    const int agent = static_cast<int>(LearningAgent::MemoryAccess);
    std::mt19937_64 rng(5);
    PpoConfig ppo;
    ppo.minibatch = 16;
    const double before = net->evaluate(agent, obs, mask).probabilities[2];
    const double otherBefore = net->evaluate(0, obs, mask).probabilities[2];
    UpdateStats last;
    for (int round = 0; round < 40; ++round) {
        const auto batch = banditRollout(*net, agent, obs, mask, 64, rng);
        last = net->update(batch, {}, ppo, static_cast<std::uint64_t>(round));
        EXPECT_EQ(last.samples, 64);
        EXPECT_TRUE(std::isfinite(last.policyLoss) && std::isfinite(last.valueLoss) && std::isfinite(last.entropy) &&
                    std::isfinite(last.approxKl) && std::isfinite(last.clipFraction) &&
                    std::isfinite(last.explainedVariance));
        EXPECT_GT(last.entropy, 0.0);
        EXPECT_GE(last.clipFraction, 0.0);
        EXPECT_LE(last.clipFraction, 1.0);
        for (int k : {3, 6, 7})
            for (const auto &t : batch)
                ASSERT_NE(t.action, k);
        const PolicyOutput out = net->evaluate(agent, obs, mask);
        for (int k : {3, 6, 7})
            ASSERT_EQ(out.probabilities[static_cast<std::size_t>(k)], 0.0);
    }
    const PolicyOutput after = net->evaluate(agent, obs, mask);
    std::cout << "[ bandit   ] p(action 2): " << before << " -> " << after.probabilities[2]
              << ", value " << after.value << ", last kl " << last.approxKl << ", clipfrac " << last.clipFraction
              << ", explained variance " << last.explainedVariance << "\n";
    EXPECT_GT(after.probabilities[2], before + 0.3);
    EXPECT_GT(after.probabilities[2], 0.6);
    EXPECT_GT(after.value, 0.3); // the critic learns the expected reward rises
    // Other agents' networks are untouched.
    EXPECT_EQ(net->evaluate(0, obs, mask).probabilities[2], otherBefore);
}

TEST(Networks, ImitationPullsTowardTheTargetAction)
{
    auto net = AgentNetworks::create({6, 32, 8});
    const std::vector<float> obs(6, -0.25f);
    const auto mask = maskOf({1, 3, 4});
    const double before = net->evaluate(1, obs, mask).probabilities[3];
    ImitationExample e;
    e.agent = 1;
    e.observation = obs;
    e.mask = mask;
    e.action = 3;
    e.weight = 2.0;
    PpoConfig ppo;
    ppo.learningRate = 1e-3;
    UpdateStats stats;
    for (int i = 0; i < 20; ++i)
        stats = net->update({}, {e}, ppo, static_cast<std::uint64_t>(i));
    const PolicyOutput after = net->evaluate(1, obs, mask);
    EXPECT_GT(after.probabilities[3], before + 0.2);
    EXPECT_GT(stats.imitationLoss, 0.0);
    EXPECT_EQ(stats.samples, 0);
    EXPECT_EQ(after.probabilities[0], 0.0);
}

TEST(Networks, SameSeedSameUpdatesGiveBitwiseIdenticalWeights)
{
    auto a = AgentNetworks::create({14, 32, 42});
    auto b = AgentNetworks::create({14, 32, 42});
    auto c = AgentNetworks::create({14, 32, 43});
    expectSameOutputs(*a, *b, 1);
    EXPECT_FALSE(sameOutputs(*a, *c));

    std::mt19937_64 rng(17);
    PpoConfig ppo;
    ppo.minibatch = 10;
    ppo.epochs = 3;
    for (int round = 0; round < 4; ++round) {
        const auto batch = mixedRollout(*a, 50, rng);
        std::vector<ImitationExample> imitation(1);
        imitation[0].agent = round % kLearningAgents;
        imitation[0].observation = batch[0].observation;
        imitation[0].mask = batch[0].mask;
        imitation[0].action = batch[0].action;
        const UpdateStats sa = a->update(batch, imitation, ppo, 100 + static_cast<std::uint64_t>(round));
        const UpdateStats sb = b->update(batch, imitation, ppo, 100 + static_cast<std::uint64_t>(round));
        EXPECT_EQ(sa.policyLoss, sb.policyLoss);
        EXPECT_EQ(sa.valueLoss, sb.valueLoss);
        EXPECT_EQ(sa.approxKl, sb.approxKl);
        EXPECT_EQ(sa.imitationLoss, sb.imitationLoss);
    }
    expectSameOutputs(*a, *b, 2);

    // A different shuffle seed gives different weights.
    const auto batch = mixedRollout(*a, 50, rng);
    a->update(batch, {}, ppo, 1);
    b->update(batch, {}, ppo, 2);
    EXPECT_FALSE(sameOutputs(*a, *b));
}

TEST(Networks, EvaluateAgreesWithTheTrainingForward)
{
    // With a learning rate of 0 the weights stay put, so the ratio pi_new / pi_old that the update sees
    // compares the batched torch forward with evaluate()'s: they must agree to float rounding.
    auto net = AgentNetworks::create({20, 48, 12});
    std::mt19937_64 rng(6);
    const auto batch = mixedRollout(*net, 64, rng);
    auto twin = AgentNetworks::create({20, 48, 12});
    PpoConfig ppo;
    ppo.learningRate = 0;
    ppo.epochs = 2;
    const UpdateStats stats = net->update(batch, {}, ppo, 3);
    EXPECT_LT(std::abs(stats.approxKl), 1e-9);
    EXPECT_EQ(stats.clipFraction, 0.0);
    EXPECT_EQ(stats.samples, 64);
    expectSameOutputs(*net, *twin, 7);
}

TEST(Networks, EvaluateTiming)
{
    auto net = AgentNetworks::create({180, 128, 1});
    std::mt19937_64 rng(2);
    const auto obs = randomObservation(180, rng);
    const auto mask = maskOf({0, 1, 2, 3, 4, 5});
    double sink = 0;
    for (int i = 0; i < 1000; ++i)
        sink += net->evaluate(i % kLearningAgents, obs, mask).value;
    const int calls = 20000;
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i)
        sink += net->evaluate(i % kLearningAgents, obs, mask).probabilities[1];
    const double us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() / calls;
    std::cout << "[ timing   ] evaluate (observation 180, hidden 128): " << us << " us per call\n";
    RecordProperty("evaluate_us", std::to_string(us));
    EXPECT_TRUE(std::isfinite(sink));
}

TEST_F(NetworksFiles, SaveLoadRoundTripContinuesDeterministically)
{
    auto a = AgentNetworks::create({10, 24, 9});
    std::mt19937_64 rng(4);
    PpoConfig ppo;
    ppo.minibatch = 12;
    a->update(mixedRollout(*a, 48, rng), {}, ppo, 7); // Adam now has moments
    const std::string metadata = "{\"command\":\"stitchcuda train\",\"seed\":9,\"text\":\"line1\\nline2 \xc3\xa9\"}";
    a->setMetadata(metadata);
    const std::string path = (m_dir / "agents.ckpt").string();
    const Status saved = a->save(path);
    ASSERT_TRUE(saved.ok()) << saved.error().toString();
    EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
    EXPECT_TRUE(startsWith(readFile(path), "STITCHCUDA-AGENTS 1\n{"));

    auto loaded = AgentNetworks::load(path, 10);
    ASSERT_TRUE(loaded.ok()) << loaded.error().toString();
    AgentNetworks &b = **loaded;
    EXPECT_EQ(b.metadata(), metadata);
    EXPECT_EQ(b.config().observationSize, 10);
    EXPECT_EQ(b.config().hidden, 24);
    EXPECT_EQ(b.config().seed, 9u);
    expectSameOutputs(*a, b, 3);

    // Updating both the same way keeps them identical: the Adam state travelled with the weights.
    for (int round = 0; round < 3; ++round) {
        const auto batch = mixedRollout(*a, 48, rng);
        a->update(batch, {}, ppo, 20 + static_cast<std::uint64_t>(round));
        b.update(batch, {}, ppo, 20 + static_cast<std::uint64_t>(round));
    }
    expectSameOutputs(*a, b, 4);

    // Saving over an existing checkpoint replaces it.
    b.setMetadata("second");
    ASSERT_TRUE(b.save(path).ok());
    auto again = AgentNetworks::load(path);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ((*again)->metadata(), "second");
    expectSameOutputs(b, **again, 5);
}

TEST_F(NetworksFiles, CorruptPayloadIsDamaged)
{
    const std::string path = savedCheckpoint("c.ckpt");
    std::string bytes = readFile(path);
    bytes[bytes.size() - 100] = static_cast<char>(bytes[bytes.size() - 100] ^ 0x5a);
    writeFile(path, bytes);
    auto r = AgentNetworks::load(path);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().kind, ErrorKind::Parse);
    EXPECT_EQ(r.error().message, path + " is damaged (checksum mismatch)");
}

TEST_F(NetworksFiles, TruncatedFileIsReported)
{
    const std::string path = savedCheckpoint("t.ckpt");
    const std::string bytes = readFile(path);
    for (const std::size_t keep : {bytes.size() - 1, bytes.size() / 2, std::size_t{40}, std::size_t{10}}) {
        writeFile(path, bytes.substr(0, keep));
        auto r = AgentNetworks::load(path);
        ASSERT_FALSE(r.ok()) << keep;
        EXPECT_EQ(r.error().kind, ErrorKind::Parse);
        EXPECT_TRUE(startsWith(r.error().message, path + " is truncated")) << r.error().message;
    }
    // Extra bytes are damage too.
    writeFile(path, bytes + "x");
    auto r = AgentNetworks::load(path);
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(startsWith(r.error().message, path + " is damaged")) << r.error().message;
    writeFile(path, "");
    EXPECT_FALSE(AgentNetworks::load(path).ok());
}

TEST_F(NetworksFiles, WrongMagicIsNotACheckpoint)
{
    const std::string path = (m_dir / "x.ckpt").string();
    writeFile(path, "{\"hello\": \"world\"}\n");
    auto r = AgentNetworks::load(path);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().kind, ErrorKind::Parse);
    EXPECT_EQ(r.error().message, path + " is not a StitchCUDA agents checkpoint");

    // A valid container whose payload is not a torch archive (checksum consistent): still a clean error.
    const std::string payload = "not a zip";
    writeFile(path, "STITCHCUDA-AGENTS 1\n{\"format\":1,\"observationSize\":4,\"hidden\":8,\"seed\":1,\"agents\":4,"
                    "\"maxActions\":8,\"metadata\":\"\",\"payloadBytes\":9,\"payloadSha256\":\"" +
                        sha256Hex(payload) + "\"}\n" + payload);
    r = AgentNetworks::load(path);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().kind, ErrorKind::Parse);
    EXPECT_TRUE(startsWith(r.error().message, path + ": cannot read the networks: ")) << r.error().message;

    writeFile(path, "STITCHCUDA-AGENTS 1\nnot json\n");
    r = AgentNetworks::load(path);
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(startsWith(r.error().message, path + " has a malformed header")) << r.error().message;
}

TEST_F(NetworksFiles, NewerVersionIsRefused)
{
    const std::string path = savedCheckpoint("n.ckpt");
    std::string bytes = readFile(path);
    ASSERT_TRUE(startsWith(bytes, "STITCHCUDA-AGENTS 1\n"));
    bytes.replace(0, 20, "STITCHCUDA-AGENTS 2\n");
    const auto pos = bytes.find("\"format\":1");
    ASSERT_NE(pos, std::string::npos);
    bytes.replace(pos, 10, "\"format\":2");
    writeFile(path, bytes);
    auto r = AgentNetworks::load(path);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().kind, ErrorKind::Parse);
    EXPECT_EQ(r.error().message, path + " was written by a newer version (format 2, this build reads 1)");
}

TEST_F(NetworksFiles, ObservationSizeMismatchIsRefused)
{
    const std::string path = savedCheckpoint("o.ckpt", 170);
    auto r = AgentNetworks::load(path, 180);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().message, path + ": observation size 170 but this build's features have 180: retrain or use "
                                        "a matching checkpoint");
    EXPECT_TRUE(AgentNetworks::load(path, 170).ok());
    EXPECT_TRUE(AgentNetworks::load(path, 0).ok());
}

TEST_F(NetworksFiles, MissingFileIsAnIoError)
{
    const std::string path = (m_dir / "does-not-exist.ckpt").string();
    auto r = AgentNetworks::load(path);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().kind, ErrorKind::Io);
    EXPECT_TRUE(startsWith(r.error().message, path)) << r.error().message;

    auto dir = AgentNetworks::load(m_dir.string());
    ASSERT_FALSE(dir.ok());
    EXPECT_EQ(dir.error().kind, ErrorKind::Io);
    EXPECT_TRUE(startsWith(dir.error().message, m_dir.string())) << dir.error().message;
}

TEST_F(NetworksFiles, UnwritablePathIsAnIoError)
{
    auto net = AgentNetworks::create({4, 8, 1});
    const std::string path = (m_dir / "no-such-dir" / "a.ckpt").string();
    const Status s = net->save(path);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().kind, ErrorKind::Io);
    EXPECT_TRUE(startsWith(s.error().message, path)) << s.error().message;
    EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
}
