#include "core/runner/Protocol.h"

#include "core/runner/JobJson.h"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace stitch::runner {

using nlohmann::json;

namespace {

constexpr std::uint8_t kMagic[4] = {'S', 'C', 'W', '1'};
constexpr std::size_t kPrefixBytes = 16;

void putLe(std::byte *out, std::uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; ++i)
        out[i] = static_cast<std::byte>(v >> (8 * i));
}

std::uint64_t getLe(const std::byte *in, int bytes)
{
    std::uint64_t v = 0;
    for (int i = 0; i < bytes; ++i)
        v |= std::uint64_t(std::to_integer<std::uint8_t>(in[i])) << (8 * i);
    return v;
}

Status checkVersion(const json &header)
{
    if (!header.contains("protocol") || !header["protocol"].is_number_integer())
        return makeError(ErrorKind::Parse, "message without a protocol version");
    const int v = header["protocol"].get<int>();
    if (v != kProtocolVersion)
        return makeError(ErrorKind::Unsupported, "peer speaks worker protocol " + std::to_string(v) + ", this build speaks " +
                                                     std::to_string(kProtocolVersion) + " (rebuild the worker and the client together)");
    return Ok{};
}

json headerOf(const char *type)
{
    return {{"type", type}, {"protocol", kProtocolVersion}};
}

} // namespace

std::vector<std::byte> encodeFrameHead(const json &header, std::uint64_t payloadBytes)
{
    const std::string text = header.dump();
    std::vector<std::byte> out(kPrefixBytes + text.size());
    std::memcpy(out.data(), kMagic, 4);
    putLe(out.data() + 4, text.size(), 4);
    putLe(out.data() + 8, payloadBytes, 8);
    std::memcpy(out.data() + kPrefixBytes, text.data(), text.size());
    return out;
}

std::vector<std::byte> encodeFrame(const json &header, const std::vector<std::byte> &payload)
{
    std::vector<std::byte> out = encodeFrameHead(header, payload.size());
    out.insert(out.end(), payload.begin(), payload.end());
    return out;
}

void FrameDecoder::fail(std::string message)
{
    m_error = makeError(ErrorKind::Parse, std::move(message));
}

void FrameDecoder::append(const std::byte *data, std::size_t size)
{
    while (size > 0 && !m_error) {
        if (!m_haveHeader) {
            const std::size_t want = m_havePrefix ? kPrefixBytes + m_headerBytes : kPrefixBytes;
            const std::size_t take = std::min(size, want - m_head.size());
            m_head.insert(m_head.end(), data, data + take);
            data += take;
            size -= take;
            if (!m_havePrefix && m_head.size() == kPrefixBytes) {
                if (std::memcmp(m_head.data(), kMagic, 4) != 0)
                    return fail("protocol error: a frame does not start with SCW1 (is something printing to the worker's stdout?)");
                m_headerBytes = getLe(m_head.data() + 4, 4);
                m_payloadBytes = getLe(m_head.data() + 8, 8);
                if (m_headerBytes > kMaxHeaderBytes || m_payloadBytes > kMaxPayloadBytes)
                    return fail("protocol error: frame of " + std::to_string(m_headerBytes) + " + " +
                                std::to_string(m_payloadBytes) + " bytes exceeds the limits");
                m_havePrefix = true;
            }
            if (m_havePrefix && m_head.size() == kPrefixBytes + m_headerBytes) {
                const char *text = reinterpret_cast<const char *>(m_head.data() + kPrefixBytes);
                m_header = json::parse(text, text + m_headerBytes, nullptr, false);
                if (m_header.is_discarded() || !m_header.is_object())
                    return fail("protocol error: frame header is not a JSON object");
                m_haveHeader = true;
                m_payload.clear();
                m_payload.reserve(m_payloadBytes);
            }
        }
        if (m_haveHeader) {
            const std::size_t take = static_cast<std::size_t>(std::min<std::uint64_t>(size, m_payloadBytes - m_payload.size()));
            m_payload.insert(m_payload.end(), data, data + take);
            data += take;
            size -= take;
            if (m_payload.size() == m_payloadBytes) {
                m_ready.push_back(Frame{std::move(m_header), std::move(m_payload)});
                m_head.clear();
                m_payload = {};
                m_header = json();
                m_havePrefix = m_haveHeader = false;
            }
        }
    }
}

Result<std::optional<Frame>> FrameDecoder::next()
{
    if (!m_ready.empty()) {
        Frame f = std::move(m_ready.front());
        m_ready.pop_front();
        return std::optional<Frame>(std::move(f));
    }
    if (m_error)
        return *m_error;
    return std::optional<Frame>();
}

Status writeAll(int fd, const std::byte *data, std::size_t size)
{
    bool socket = true;
    while (size > 0) {
        ssize_t n = socket ? ::send(fd, data, size, MSG_NOSIGNAL) : ::write(fd, data, size);
        if (n < 0 && socket && errno == ENOTSOCK) {
            socket = false;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return makeError(ErrorKind::Io, std::string("write to the worker pipe failed: ") + std::strerror(errno));
        data += n;
        size -= static_cast<std::size_t>(n);
    }
    return Ok{};
}

Status writeFrame(int fd, const Frame &frame)
{
    const auto head = encodeFrameHead(frame.header, frame.payload.size());
    if (auto st = writeAll(fd, head.data(), head.size()); !st)
        return st;
    return writeAll(fd, frame.payload.data(), frame.payload.size());
}

Result<std::optional<Frame>> readFrame(int fd, FrameDecoder &decoder)
{
    // One reusable read buffer per thread: the worker reads every job through it.
    static thread_local std::vector<std::byte> chunk(1 << 18);
    for (;;) {
        auto frame = decoder.next();
        if (!frame || *frame)
            return frame;
        const ssize_t n = ::read(fd, chunk.data(), chunk.size());
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return makeError(ErrorKind::Io, std::string("read from the worker pipe failed: ") + std::strerror(errno));
        if (n == 0) {
            if (decoder.buffered() > 0)
                return makeError(ErrorKind::Parse, "protocol error: stream ended inside a frame");
            return std::optional<Frame>();
        }
        decoder.append(chunk.data(), static_cast<std::size_t>(n));
    }
}

std::string messageType(const Frame &frame)
{
    return frame.header.contains("type") && frame.header["type"].is_string() ? frame.header["type"].get<std::string>() : "";
}

Frame encodeHello(const WorkerHello &h)
{
    json j = headerOf("hello");
    j["pid"] = h.pid;
    j["workerVersion"] = h.workerVersion;
    j["device"] = h.device ? deviceToJson(*h.device) : json(nullptr);
    j["error"] = h.error ? errorToJson(*h.error) : json(nullptr);
    return Frame{j, {}};
}

Result<WorkerHello> decodeHello(const Frame &f)
{
    if (messageType(f) != "hello")
        return makeError(ErrorKind::Parse, "protocol error: expected hello, got '" + messageType(f) + "'");
    if (auto st = checkVersion(f.header); !st)
        return st.error();
    WorkerHello h;
    h.protocol = kProtocolVersion;
    h.pid = f.header.value("pid", 0);
    h.workerVersion = f.header.value("workerVersion", std::string());
    if (f.header.contains("device") && !f.header["device"].is_null()) {
        auto d = deviceFromJson(f.header["device"]);
        if (!d)
            return d.error();
        h.device = *d;
    }
    if (f.header.contains("error") && !f.header["error"].is_null())
        h.error = errorFromJson(f.header["error"]);
    if (!h.device && !h.error)
        return makeError(ErrorKind::Parse, "protocol error: hello names neither a device nor an error");
    return h;
}

Frame encodeJobMessage(std::uint64_t jobId, const Job &job)
{
    BlobSink blobs;
    json j = headerOf("job");
    j["id"] = jobId;
    j["job"] = jobToJson(job, blobs);
    return Frame{j, blobs.takeBytes()};
}

Result<std::pair<std::uint64_t, Job>> decodeJobMessage(const Frame &f)
{
    if (messageType(f) != "job")
        return makeError(ErrorKind::Parse, "protocol error: expected job, got '" + messageType(f) + "'");
    if (auto st = checkVersion(f.header); !st)
        return st.error();
    if (!f.header.contains("id") || !f.header["id"].is_number_unsigned() || !f.header.contains("job"))
        return makeError(ErrorKind::Parse, "protocol error: job message without id or job");
    BlobSource blobs(f.payload.data(), f.payload.size());
    auto job = jobFromJson(f.header["job"], blobs);
    if (!job)
        return job.error();
    return std::pair<std::uint64_t, Job>(f.header["id"].get<std::uint64_t>(), std::move(*job));
}

Frame encodeReply(const JobReply &r)
{
    BlobSink blobs;
    json j = headerOf("result");
    j["id"] = r.jobId;
    j["ok"] = r.result.ok();
    j["recycle"] = r.recycle;
    if (r.result)
        j["result"] = resultToJson(*r.result, &blobs);
    else
        j["error"] = errorToJson(r.result.error());
    return Frame{j, blobs.takeBytes()};
}

Result<JobReply> decodeReply(const Frame &f)
{
    if (messageType(f) != "result")
        return makeError(ErrorKind::Parse, "protocol error: expected result, got '" + messageType(f) + "'");
    if (auto st = checkVersion(f.header); !st)
        return st.error();
    const json &h = f.header;
    if (!h.contains("id") || !h["id"].is_number_unsigned() || !h.contains("ok") || !h["ok"].is_boolean())
        return makeError(ErrorKind::Parse, "protocol error: result message without id or ok");
    JobReply r;
    r.jobId = h["id"].get<std::uint64_t>();
    r.recycle = h.value("recycle", false);
    if (h["ok"].get<bool>()) {
        if (!h.contains("result"))
            return makeError(ErrorKind::Parse, "protocol error: ok result without a result");
        BlobSource blobs(f.payload.data(), f.payload.size());
        auto result = resultFromJson(h["result"], &blobs);
        if (!result)
            return result.error();
        r.result = std::move(*result);
    } else {
        r.result = errorFromJson(h.value("error", json::object()));
    }
    return r;
}

Frame encodeShutdown()
{
    return Frame{headerOf("shutdown"), {}};
}

} // namespace stitch::runner
