// ArrayReadBudget: selection, the caller's checks and the byte limit of array reads.
#include "io/array_read_budget.h"

#include <algorithm>

#include "core/errors.h"
#include "tensoracle/byte_size.h"

namespace tensoracle {

uint64_t default_array_read_limit(uint64_t file_bytes) {
  const uint64_t scaled =
      file_bytes > UINT64_MAX / kDefaultArrayReadFactor ? UINT64_MAX : file_bytes * kDefaultArrayReadFactor;
  return std::max(kDefaultArrayReadFloor, scaled);
}

ArrayReadBudget::ArrayReadBudget(const std::string& path, const ArrayReadOptions& options, uint64_t file_bytes)
    : path_(path),
      options_(options),
      file_bytes_(file_bytes),
      limit_(options.max_total_bytes ? *options.max_total_bytes : default_array_read_limit(file_bytes)) {}

bool ArrayReadBudget::wanted(const std::string& name) const {
  if (options_.only && options_.only->count(name) == 0) return false;
  return options_.exclude.count(name) == 0;
}

Status ArrayReadBudget::admit(const std::string& name, DataType dtype, const Dims& shape, uint64_t bytes) {
  if (options_.check) TO_RETURN_IF_ERROR(options_.check(name, dtype, shape));
  admitted_ = bytes > UINT64_MAX - admitted_ ? UINT64_MAX : admitted_ + bytes;
  if (admitted_ <= limit_) return Status::ok();
  const std::string bound = options_.max_total_bytes
                                ? std::string("the limit given")
                                : fmt::format("the default limit, the larger of {} and {}x the file's {}",
                                              format_byte_size(kDefaultArrayReadFloor), kDefaultArrayReadFactor,
                                              format_byte_size(file_bytes_));
  return invalid_argument(
      "array '{}' ({} {}, {}) brings the data read to {}, over {} ({}); nothing was allocated for it. Raise the "
      "limit if this is expected (ArrayReadOptions::max_total_bytes; tensoracle compare --max-input-size)",
      name, data_type_name(dtype), shape.to_string(), format_byte_size(bytes), format_byte_size(admitted_),
      bound, format_byte_size(limit_));
}

Status ArrayReadBudget::check_complete(const std::vector<std::string>& held) const {
  if (!options_.only) return Status::ok();
  for (const std::string& name : *options_.only) {
    if (std::find(held.begin(), held.end(), name) != held.end()) continue;
    std::string list;
    for (const std::string& h : held) list += (list.empty() ? "" : ", ") + h;
    return not_found("'{}' has no array '{}' (it holds: {})", path_, name, list.empty() ? "nothing" : list);
  }
  return Status::ok();
}

}  // namespace tensoracle
