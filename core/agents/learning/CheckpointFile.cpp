// The agents' checkpoint framing (CheckpointFile.h); the networks' payload is Networks.cpp's.
#include "core/agents/learning/CheckpointFile.h"

#include "core/common/Sha256.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace stitch::agents {

namespace {
constexpr const char *kMagicPrefix = "STITCHCUDA-AGENTS ";
} // namespace

Status writeCheckpointFile(const std::string &path, const CheckpointHeader &h, const std::string &bytes)
{
    std::string header;
    try {
        const nlohmann::json j = {
            {"format", kCheckpointFormat},
            {"observationSize", h.config.observationSize},
            {"hidden", h.config.hidden},
            {"seed", h.config.seed},
            {"agents", kLearningAgents},
            {"maxActions", kMaxActions},
            {"metadata", h.metadata},
            {"payloadBytes", bytes.size()},
            {"payloadSha256", sha256Hex(bytes)},
        };
        header = j.dump();
    } catch (const std::exception &e) {
        return makeError(ErrorKind::InvalidArgument, path + ": cannot write the header (is the metadata UTF-8?): " +
                                                         e.what());
    }

    const std::string tmp = path + ".tmp";
    {
        std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
        if (!f)
            return makeError(ErrorKind::Io, path + ": cannot create " + tmp + ": " + std::strerror(errno));
        f << kMagicPrefix << kCheckpointFormat << '\n' << header << '\n';
        f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        f.close();
        if (!f) {
            const int err = errno;
            std::remove(tmp.c_str());
            return makeError(ErrorKind::Io, path + ": cannot write " + tmp + ": " + std::strerror(err));
        }
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        const int err = errno;
        std::remove(tmp.c_str());
        return makeError(ErrorKind::Io, path + ": cannot rename " + tmp + " to it: " + std::strerror(err));
    }
    return Ok{};
}

Result<std::pair<CheckpointHeader, std::string>> readCheckpointFile(const std::string &path, int expectedObservationSize)
{
    const auto parseError = [&](const std::string &what) { return makeError(ErrorKind::Parse, path + what); };

    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
        return makeError(ErrorKind::Io, path + ": no such file");
    if (!std::filesystem::is_regular_file(path, ec))
        return makeError(ErrorKind::Io, path + ": not a regular file");
    std::string content;
    {
        std::ifstream f(path, std::ios::binary);
        if (!f)
            return makeError(ErrorKind::Io, path + ": cannot open: " + std::strerror(errno));
        std::ostringstream ss;
        ss << f.rdbuf();
        if (f.bad())
            return makeError(ErrorKind::Io, path + ": cannot read: " + std::strerror(errno));
        content = std::move(ss).str();
    }

    // Magic line: "STITCHCUDA-AGENTS <format>".
    const std::string prefix = kMagicPrefix;
    if (content.empty())
        return parseError(" is empty: not a StitchCUDA agents checkpoint");
    if (content.compare(0, prefix.size(), prefix) != 0) {
        if (content.size() < prefix.size() && prefix.compare(0, content.size(), content) == 0)
            return parseError(" is truncated (in the first line)");
        return parseError(" is not a StitchCUDA agents checkpoint");
    }
    const std::size_t magicEnd = content.find('\n');
    if (magicEnd == std::string::npos)
        return parseError(" is truncated (in the first line)");
    const std::string versionText = content.substr(prefix.size(), magicEnd - prefix.size());
    if (versionText.empty() || versionText.size() > 9 ||
        !std::all_of(versionText.begin(), versionText.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return parseError(" is not a StitchCUDA agents checkpoint");
    const int version = std::stoi(versionText);
    if (version > kCheckpointFormat)
        return parseError(" was written by a newer version (format " + std::to_string(version) +
                          ", this build reads " + std::to_string(kCheckpointFormat) + ")");
    if (version < 1)
        return parseError(" is not a StitchCUDA agents checkpoint (format " + versionText + ")");

    // Header line.
    const std::size_t headerEnd = content.find('\n', magicEnd + 1);
    if (headerEnd == std::string::npos)
        return parseError(" is truncated (in the header)");
    CheckpointHeader header;
    NetworkConfig &config = header.config;
    std::string sha;
    std::uint64_t payloadBytes = 0;
    try {
        const nlohmann::json j = nlohmann::json::parse(content.begin() + static_cast<std::ptrdiff_t>(magicEnd + 1),
                                                       content.begin() + static_cast<std::ptrdiff_t>(headerEnd));
        if (j.at("format").get<int>() != version)
            return parseError(" is damaged (header format " + j.at("format").dump() + " but first line says " +
                              versionText + ")");
        config.observationSize = j.at("observationSize").get<int>();
        config.hidden = j.at("hidden").get<int>();
        config.seed = j.at("seed").get<std::uint64_t>();
        const int agents = j.at("agents").get<int>();
        const int actions = j.at("maxActions").get<int>();
        if (agents != kLearningAgents || actions != kMaxActions)
            return parseError(" holds " + std::to_string(agents) + " networks of " + std::to_string(actions) +
                              " actions but this build has " + std::to_string(kLearningAgents) + " of " +
                              std::to_string(kMaxActions));
        header.metadata = j.at("metadata").get<std::string>();
        payloadBytes = j.at("payloadBytes").get<std::uint64_t>();
        sha = j.at("payloadSha256").get<std::string>();
    } catch (const std::exception &e) {
        return parseError(" has a malformed header: " + std::string(e.what()));
    }
    if (config.observationSize <= 0 || config.observationSize > kMaxObservationSize || config.hidden <= 0 ||
        config.hidden > kMaxHidden)
        return parseError(" has a malformed header (observation size " + std::to_string(config.observationSize) +
                          ", hidden " + std::to_string(config.hidden) + ")");

    // Payload: length and checksum.
    const std::size_t available = content.size() - (headerEnd + 1);
    if (available < payloadBytes)
        return parseError(" is truncated (payload has " + std::to_string(available) + " of " +
                          std::to_string(payloadBytes) + " bytes)");
    if (available > payloadBytes)
        return parseError(" is damaged (" + std::to_string(available - payloadBytes) +
                          " unexpected bytes after the payload)");
    std::string payload = content.substr(headerEnd + 1);
    content.clear();
    if (sha256Hex(payload) != sha)
        return parseError(" is damaged (checksum mismatch)");

    if (expectedObservationSize > 0 && config.observationSize != expectedObservationSize)
        return parseError(": observation size " + std::to_string(config.observationSize) +
                          " but this build's features have " + std::to_string(expectedObservationSize) +
                          ": retrain or use a matching checkpoint");
    return std::pair{std::move(header), std::move(payload)};
}

} // namespace stitch::agents
