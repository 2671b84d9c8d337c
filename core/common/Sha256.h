#pragma once
// SHA-256 for content keys (program hashes of the measurement cache, module caches).
//   cubin bytes + canonical launch-plan JSON -> Sha256 -> hex digest -> storage key, worker module cache
// Self-contained so that core needs no crypto library; not meant for secrets.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace stitch {

/// Incremental SHA-256 (FIPS 180-4). Feed bytes with update(), then read hexDigest() once.
class Sha256 {
public:
    Sha256();

    void update(const void *data, std::size_t size);
    void update(std::string_view text) { update(text.data(), text.size()); }
    /// Feeds a length prefix and the bytes, so that ("ab","c") and ("a","bc") hash differently.
    void updateField(std::string_view bytes);

    /// The 32-byte digest; the object must not be updated afterwards.
    std::array<std::uint8_t, 32> digest();
    /// The digest as 64 lowercase hex characters.
    std::string hexDigest();

private:
    void compress(const std::uint8_t *block);

    std::array<std::uint32_t, 8> m_state{};
    std::array<std::uint8_t, 64> m_buffer{};
    std::size_t m_buffered = 0;
    std::uint64_t m_totalBytes = 0;
};

/// SHA-256 of a string, as hex.
std::string sha256Hex(std::string_view bytes);

} // namespace stitch
