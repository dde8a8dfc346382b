#include <limits>

#include "core/errors.h"
#include "tensoracle/types.h"

namespace tensoracle {

std::optional<int64_t> checked_mul(int64_t a, int64_t b) {
  int64_t out = 0;
  if (a < 0 || b < 0 || __builtin_mul_overflow(a, b, &out)) return std::nullopt;
  return out;
}

std::optional<int64_t> checked_add(int64_t a, int64_t b) {
  int64_t out = 0;
  if (a < 0 || b < 0 || __builtin_add_overflow(a, b, &out)) return std::nullopt;
  return out;
}

bool Dims::is_static() const {
  for (int64_t d : dims_)
    if (d < 0) return false;
  return true;
}

Result<int64_t> Dims::element_count() const {
  int64_t count = 1;
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (dims_[i] == kDynamic)
      return invalid_argument("shape {} has a dynamic dimension at index {}", to_string(), i);
    if (dims_[i] < 0)
      return invalid_argument("shape {} has a negative dimension {} at index {}", to_string(), dims_[i], i);
    auto next = checked_mul(count, dims_[i]);
    if (!next) return invalid_argument("shape {} has more elements than int64 can count", to_string());
    count = *next;
  }
  return count;
}

Result<int64_t> Dims::byte_size(DataType type) const {
  TO_ASSIGN_OR_RETURN(int64_t count, element_count());
  auto bytes = checked_mul(count, static_cast<int64_t>(data_type_size(type)));
  if (!bytes) return invalid_argument("shape {} of {} overflows int64 bytes", to_string(), data_type_name(type));
  return *bytes;
}

std::string Dims::to_string() const {
  std::string out = "[";
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (i) out += ",";
    out += std::to_string(dims_[i]);
  }
  return out + "]";
}

}  // namespace tensoracle
