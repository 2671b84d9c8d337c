#pragma once
// The worker protocol: length-prefixed frames of JSON plus a binary payload, over a stream.
//   client: Job -> encodeJobMessage -> frame -> worker stdin | worker stdout -> frame -> decodeResultMessage
// Frame = "SCW1" | u32 header bytes | u64 payload bytes | header JSON | payload (little-endian).
// Messages: worker "hello" first; then client "job" -> worker "result", repeated; client "shutdown".
// The version is in every header; a peer with another version is refused (docs/RUNNER.md).

#include "core/common/Result.h"
#include "core/runner/Job.h"
#include "core/runner/JobResult.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

namespace stitch::runner {

/// Raised whenever a message changes meaning; both sides refuse a peer with another version.
inline constexpr int kProtocolVersion = 1;
inline constexpr std::size_t kMaxHeaderBytes = std::size_t{64} << 20;
inline constexpr std::uint64_t kMaxPayloadBytes = std::uint64_t{64} << 30;

struct Frame {
    nlohmann::json header;
    std::vector<std::byte> payload;
};

/// The bytes of one frame.
std::vector<std::byte> encodeFrame(const nlohmann::json &header, const std::vector<std::byte> &payload);
/// Prefix and header of a frame whose payload (payloadBytes long) is sent separately: large
/// payloads go out from where they are instead of being copied behind the header first.
std::vector<std::byte> encodeFrameHead(const nlohmann::json &header, std::uint64_t payloadBytes);

/// Splits a byte stream into frames; feed it whatever arrived, take complete frames out. A
/// payload is collected in a buffer reserved at its full size once the header announces it.
class FrameDecoder {
public:
    void append(const std::byte *data, std::size_t size);
    /// The next complete frame, nullopt when more bytes are needed, or a Parse error for a
    /// corrupt stream (bad magic, oversized lengths, malformed JSON); the stream is then unusable.
    Result<std::optional<Frame>> next();
    /// Bytes of a frame not yet complete.
    std::size_t buffered() const { return m_head.size() + m_payload.size(); }

private:
    void fail(std::string message);

    std::deque<Frame> m_ready;
    std::optional<Error> m_error;
    std::vector<std::byte> m_head; ///< prefix, then header
    std::uint64_t m_headerBytes = 0;
    std::uint64_t m_payloadBytes = 0;
    bool m_havePrefix = false;
    bool m_haveHeader = false;
    nlohmann::json m_header;
    std::vector<std::byte> m_payload;
};

/// Writes a frame to fd (blocking): head, then the payload in place.
Status writeFrame(int fd, const Frame &frame);
/// Writes all bytes to fd, retrying on EINTR; on sockets without SIGPIPE. Io error on failure.
Status writeAll(int fd, const std::byte *data, std::size_t size);
/// Blocking read of one frame from fd (the worker's side). nullopt at end of stream before a frame.
Result<std::optional<Frame>> readFrame(int fd, FrameDecoder &decoder);

/// What a worker announces as it starts: its version and its device, or why it has none.
struct WorkerHello {
    int protocol = 0;
    int pid = 0;
    std::string workerVersion;
    std::optional<DeviceIdentity> device; ///< set when the worker owns a GPU context
    std::optional<Error> error;           ///< set when it does not (NoDevice, Driver); it then exits
};

/// A worker's answer to one job.
struct JobReply {
    std::uint64_t jobId = 0;
    Result<JobResult> result = makeError(ErrorKind::Driver, "no reply");
    bool recycle = false; ///< the worker's context is suspect (fault, OOM): it exits after replying
};

Frame encodeHello(const WorkerHello &hello);
Result<WorkerHello> decodeHello(const Frame &frame);

Frame encodeJobMessage(std::uint64_t jobId, const Job &job);
/// The job id and the job; Parse or Unsupported (version) errors for a bad message.
Result<std::pair<std::uint64_t, Job>> decodeJobMessage(const Frame &frame);

Frame encodeReply(const JobReply &reply);
Result<JobReply> decodeReply(const Frame &frame);

Frame encodeShutdown();
/// "hello", "job", "result", "shutdown", or "" when the header has no type.
std::string messageType(const Frame &frame);

} // namespace stitch::runner
