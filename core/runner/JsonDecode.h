#pragma once
// What JobJson.cpp and ResultJson.cpp share to decode the worker protocol's JSON: a decoder runs
// inside guarded(), which turns nlohmann's exceptions and DecodeError into one Parse error.
// Private to core/runner.

#include "core/common/Result.h"
#include "core/ir/DType.h"
#include "core/runner/JobJson.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace stitch::runner::jsondetail {

using nlohmann::json;

// A value that is present and well typed but not acceptable (unknown dtype, bad blob reference).
struct DecodeError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Decoding reads many members; nlohmann throws on a missing or mistyped one. Each decoder runs
// inside this guard so that a bad document is one Parse error, never an exception to the caller.
template <typename T, typename F> Result<T> guarded(const char *what, F &&decode)
{
    try {
        return decode();
    } catch (const json::exception &e) {
        return makeError(ErrorKind::Parse, std::string("malformed ") + what + ": " + e.what());
    } catch (const DecodeError &e) {
        return makeError(ErrorKind::Parse, std::string("malformed ") + what + ": " + e.what());
    }
}

inline ir::DType dtypeOf(const json &j)
{
    auto t = ir::parseDType(j.get<std::string>());
    if (!t)
        throw DecodeError("unknown dtype '" + j.get<std::string>() + "'");
    return *t;
}

template <typename Enum, typename Parse> Enum enumOf(const json &j, Parse parse, const char *what)
{
    auto v = parse(j.get<std::string>());
    if (!v)
        throw DecodeError(std::string("unknown ") + what + " '" + j.get<std::string>() + "'");
    return *v;
}

// NaN and infinities as "nan", "inf", "-inf": JSON has no such numbers, and a NaN in an output
// (or its error) is exactly what a report must not lose.
inline json numberToJson(double value)
{
    if (std::isnan(value))
        return "nan";
    if (std::isinf(value))
        return value > 0 ? "inf" : "-inf";
    return value;
}

inline double numberFromJson(const json &j)
{
    if (j.is_number())
        return j.get<double>();
    if (j.is_string()) {
        const auto s = j.get<std::string>();
        if (s == "nan")
            return std::numeric_limits<double>::quiet_NaN();
        if (s == "inf")
            return std::numeric_limits<double>::infinity();
        if (s == "-inf")
            return -std::numeric_limits<double>::infinity();
    }
    throw DecodeError("expected a number, \"nan\", \"inf\" or \"-inf\", got " + j.dump());
}

inline json dims(unsigned x, unsigned y, unsigned z)
{
    return json::array({x, y, z});
}

inline std::vector<char> toChars(const std::vector<std::byte> &bytes)
{
    std::vector<char> out(bytes.size());
    if (!bytes.empty())
        std::memcpy(out.data(), bytes.data(), bytes.size());
    return out;
}

inline std::vector<char> blobOrThrow(const BlobSource &blobs, const json &ref)
{
    auto b = blobs.get(ref);
    if (!b)
        throw DecodeError(b.error().message);
    return toChars(*b);
}

} // namespace stitch::runner::jsondetail
