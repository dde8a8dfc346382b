// Internal helpers to build Status values with fmt-formatted messages.
#pragma once

#include <fmt/format.h>

#include "tensoracle/status.h"

namespace tensoracle {

template <typename... Args>
Status make_error(StatusCode code, fmt::format_string<Args...> format, Args&&... args) {
  return Status(code, fmt::format(format, std::forward<Args>(args)...));
}

template <typename... Args>
Status invalid_argument(fmt::format_string<Args...> format, Args&&... args) {
  return make_error(StatusCode::kInvalidArgument, format, std::forward<Args>(args)...);
}

template <typename... Args>
Status corrupt_data(fmt::format_string<Args...> format, Args&&... args) {
  return make_error(StatusCode::kCorruptData, format, std::forward<Args>(args)...);
}

template <typename... Args>
Status io_error(fmt::format_string<Args...> format, Args&&... args) {
  return make_error(StatusCode::kIoError, format, std::forward<Args>(args)...);
}

template <typename... Args>
Status not_found(fmt::format_string<Args...> format, Args&&... args) {
  return make_error(StatusCode::kNotFound, format, std::forward<Args>(args)...);
}

template <typename... Args>
Status unsupported(fmt::format_string<Args...> format, Args&&... args) {
  return make_error(StatusCode::kUnsupported, format, std::forward<Args>(args)...);
}

}  // namespace tensoracle
