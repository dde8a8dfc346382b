// Status -> Python exceptions: one hierarchy, tensoracle.Error with a subclass per StatusCode,
// each carrying the C++ message unchanged (str(e)) and the code's name (e.code).
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <exception>
#include <string>
#include <utility>

#include "tensoracle/status.h"

namespace tensoracle::python {

// A failed Status on its way to Python; the registered translator raises the matching class.
class StatusError : public std::exception {
 public:
  explicit StatusError(Status status) : status_(std::move(status)) {}
  const Status& status() const { return status_; }
  const char* what() const noexcept override { return status_.message().c_str(); }

 private:
  Status status_;
};

// A Python exception raised inside a callback the library made (a graph function) as a Status:
// "<context> raised <traceback>", keeping the code of a tensoracle.Error (else invalid_argument).
Status status_from_python_error(const nanobind::python_error& error, const std::string& context);

// Throws StatusError when `status` is not ok.
inline void check(const Status& status) {
  if (!status.is_ok()) throw StatusError(status);
}

// The value of `result`, or throws its StatusError.
template <typename T>
T unwrap(Result<T> result) {
  if (!result.is_ok()) throw StatusError(result.status());
  return std::move(result).value();
}

// repr(value), for messages.
inline std::string python_repr(nanobind::handle value) { return nanobind::cast<std::string>(nanobind::repr(value)); }

// An InvalidArgumentError for a caller mistake found by the bindings themselves.
[[noreturn]] inline void fail(std::string message) {
  throw StatusError(Status(StatusCode::kInvalidArgument, std::move(message)));
}

}  // namespace tensoracle::python
