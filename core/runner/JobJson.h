#pragma once
// Job and JobResult <-> JSON: the body of the worker protocol and of cached measurements.
//   Job -> jobToJson (+ blobs) -> Protocol frame -> jobFromJson -> Executor -> resultToJson -> client
// Large byte arrays (CUBIN, outputs) travel as blobs beside the JSON, referenced as
// {"blob": [offset, size]}, so that no megabytes are base64-encoded on the hot path.

#include "core/common/Result.h"
#include "core/runner/Job.h"
#include "core/runner/JobResult.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <vector>

namespace stitch::runner {

/// Collects the binary attachments of one frame.
class BlobSink {
public:
    /// Appends bytes; returns the reference {"blob": [offset, size]} to put in the JSON.
    nlohmann::json add(const void *data, std::size_t size);
    const std::vector<std::byte> &bytes() const { return m_bytes; }
    std::vector<std::byte> takeBytes() { return std::move(m_bytes); }

private:
    std::vector<std::byte> m_bytes;
};

/// Resolves blob references against the payload of a received frame.
class BlobSource {
public:
    BlobSource() = default;
    BlobSource(const std::byte *data, std::size_t size) : m_data(data), m_size(size) {}
    /// Parse error when the reference is malformed or points outside the payload.
    Result<std::vector<std::byte>> get(const nlohmann::json &reference) const;

private:
    const std::byte *m_data = nullptr;
    std::size_t m_size = 0;
};

nlohmann::json planToJson(const LaunchPlan &plan);
Result<LaunchPlan> planFromJson(const nlohmann::json &json);

nlohmann::json measureToJson(const MeasureOptions &options);
Result<MeasureOptions> measureFromJson(const nlohmann::json &json);

/// The job with its module (and the reference's) as blobs in `blobs`.
nlohmann::json jobToJson(const Job &job, BlobSink &blobs);
Result<Job> jobFromJson(const nlohmann::json &json, const BlobSource &blobs);

/// The result; outputs go to `blobs` when given, and are left out otherwise (the cache).
nlohmann::json resultToJson(const JobResult &result, BlobSink *blobs);
/// Outputs are read only when `blobs` is given.
Result<JobResult> resultFromJson(const nlohmann::json &json, const BlobSource *blobs);

nlohmann::json deviceToJson(const DeviceIdentity &device);
Result<DeviceIdentity> deviceFromJson(const nlohmann::json &json);

/// {"kind": "fault", "message": ..., "diagnostics": [...]}.
nlohmann::json errorToJson(const Error &error);
Error errorFromJson(const nlohmann::json &json);
/// The ErrorKind of an errorKindName() string; nullopt for unknown names.
std::optional<ErrorKind> parseErrorKind(const std::string &name);

} // namespace stitch::runner
