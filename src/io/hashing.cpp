#include "tensoracle/hashing.h"

#include <openssl/evp.h>
#include <xxhash.h>

#include <cstdio>
#include <vector>

#include "core/errors.h"

namespace tensoracle {

std::string to_hex(const uint8_t* bytes, size_t size) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(size * 2, '0');
  for (size_t i = 0; i < size; ++i) {
    out[2 * i] = kDigits[bytes[i] >> 4];
    out[2 * i + 1] = kDigits[bytes[i] & 0xF];
  }
  return out;
}

Result<std::string> from_hex(std::string_view hex) {
  if (hex.size() % 2 != 0) return invalid_argument("hex text of odd length {}", hex.size());
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out(hex.size() / 2, '\0');
  for (size_t i = 0; i < hex.size(); ++i) {
    const int value = nibble(hex[i]);
    if (value < 0) return invalid_argument("hex text has a non-hex character at offset {}", i);
    out[i / 2] = static_cast<char>(i % 2 == 0 ? value << 4 : (static_cast<unsigned char>(out[i / 2]) | value));
  }
  return out;
}

struct Sha256::State {
  EVP_MD_CTX* context = nullptr;
  ~State() { EVP_MD_CTX_free(context); }
};

Sha256::Sha256() : state_(std::make_unique<State>()) {
  state_->context = EVP_MD_CTX_new();
  EVP_DigestInit_ex(state_->context, EVP_sha256(), nullptr);
}
Sha256::~Sha256() = default;
Sha256::Sha256(Sha256&&) noexcept = default;
Sha256& Sha256::operator=(Sha256&&) noexcept = default;

void Sha256::update(const void* data, size_t size) { EVP_DigestUpdate(state_->context, data, size); }

Sha256Digest Sha256::finish() {
  Sha256Digest digest{};
  unsigned int length = 0;
  EVP_DigestFinal_ex(state_->context, digest.data(), &length);
  return digest;
}

Sha256Digest sha256(const void* data, size_t size) {
  Sha256 hasher;
  hasher.update(data, size);
  return hasher.finish();
}

std::string sha256_hex(const void* data, size_t size) { return to_hex(sha256(data, size)); }

Result<std::string> sha256_file_hex(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) return io_error("cannot open '{}' to hash it", path);
  Sha256 hasher;
  std::vector<char> block(1 << 20);
  size_t read = 0;
  while ((read = std::fread(block.data(), 1, block.size(), file)) > 0) hasher.update(block.data(), read);
  const bool failed = std::ferror(file) != 0;
  std::fclose(file);
  if (failed) return io_error("read error while hashing '{}'", path);
  return hasher.finish_hex();
}

std::string xxh3_128_hex(const void* data, size_t size) {
  const XXH128_hash_t hash = XXH3_128bits(data, size);
  XXH128_canonical_t canonical;
  XXH128_canonicalFromHash(&canonical, hash);
  return to_hex(canonical.digest, sizeof canonical.digest);
}

}  // namespace tensoracle
