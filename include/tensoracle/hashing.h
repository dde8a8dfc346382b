// Content hashes: SHA-256 (identities that enter cache keys and manifests) and XXH3-128 (fast
// integrity checksums). Hex strings are lower-case.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "tensoracle/status.h"

namespace tensoracle {

using Sha256Digest = std::array<uint8_t, 32>;

std::string to_hex(const uint8_t* bytes, size_t size);
inline std::string to_hex(const Sha256Digest& digest) { return to_hex(digest.data(), digest.size()); }
inline std::string to_hex(std::string_view bytes) {
  return to_hex(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
}
// The bytes of an even-length string of hex digits (either case); the error names the first
// character that is not one, or the odd length.
Result<std::string> from_hex(std::string_view hex);

Sha256Digest sha256(const void* data, size_t size);
inline Sha256Digest sha256(std::string_view text) { return sha256(text.data(), text.size()); }
std::string sha256_hex(const void* data, size_t size);
inline std::string sha256_hex(std::string_view text) { return sha256_hex(text.data(), text.size()); }

// SHA-256 of a whole file, read in large blocks. Errors name the file.
Result<std::string> sha256_file_hex(const std::string& path);

// Incremental SHA-256.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(Sha256&&) noexcept;
  Sha256& operator=(Sha256&&) noexcept;
  void update(const void* data, size_t size);
  void update(std::string_view text) { update(text.data(), text.size()); }
  Sha256Digest finish();  // the object may not be updated afterwards
  std::string finish_hex() { return to_hex(finish()); }

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// XXH3 128-bit hash as 32 hex characters.
std::string xxh3_128_hex(const void* data, size_t size);

}  // namespace tensoracle
