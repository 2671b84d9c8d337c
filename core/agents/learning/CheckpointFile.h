#pragma once
// The agents' checkpoint file, without LibTorch: its framing and integrity checks.
//   "STITCHCUDA-AGENTS <format>\n" + one JSON header line (format, sizes, seed, agents, actions,
//   metadata, payload length and SHA-256) + the payload (Networks.cpp's torch archive)
// Writing is atomic (a temporary file renamed over the target); reading refuses, naming the file, a
// file that is not a checkpoint, truncated, damaged (checksum), from a newer format, or for other
// network sizes than this build's.

#include "core/agents/learning/Networks.h"
#include "core/common/Result.h"

#include <string>
#include <utility>

namespace stitch::agents {

inline constexpr int kCheckpointFormat = 1;
inline constexpr int kMaxObservationSize = 1 << 20;
inline constexpr int kMaxHidden = 1 << 14;

struct CheckpointHeader {
    NetworkConfig config;
    std::string metadata;
};

Status writeCheckpointFile(const std::string &path, const CheckpointHeader &header, const std::string &payload);

/// The header and the payload (checked against its length and SHA-256). expectedObservationSize > 0:
/// a checkpoint for another feature size is refused ("retrain or use a matching checkpoint").
Result<std::pair<CheckpointHeader, std::string>> readCheckpointFile(const std::string &path, int expectedObservationSize);

} // namespace stitch::agents
