// Status and Result<T>: how every tensoracle function reports failure.
//
// Library functions never throw across the public API and never abort. A user error names the
// thing at fault (file, tensor, field, layer) and the bad value; an internal error names the
// source location of the broken invariant (see TO_ASSERT).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace tensoracle {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,     // the caller passed something unusable (shape, name, option)
  kNotFound,            // a named file, tensor or key does not exist
  kIoError,             // the operating system refused a read, write, map or rename
  kCorruptData,         // a file's bytes contradict its own format (bad header, lying lengths)
  kUnsupported,         // valid request this build, backend or GPU cannot serve
  kFailedPrecondition,  // the system is not in a state where the call can run
  kCudaError,           // CUDA runtime/driver, cuBLASLt or cuDNN reported failure
  kInternal,            // a tensoracle invariant broke: a bug, reported with file:line
};

// The stable lower-case name of a code ("invalid_argument", ...).
std::string_view status_code_name(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // ok
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok() { return {}; }

  bool is_ok() const { return code_ == StatusCode::kOk; }
  explicit operator bool() const { return is_ok(); }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // "<code name>: <message>", or "ok".
  std::string to_string() const;

  // Prefixes the message with where it happened: "reading 'w.safetensors': <message>".
  Status with_context(std::string_view context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// A value or the Status explaining why there is none.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}                   // NOLINT: implicit by design
  Result(Status status) : state_(std::move(status)) {}            // NOLINT: implicit by design
  Result(StatusCode code, std::string message) : state_(Status(code, std::move(message))) {}

  bool is_ok() const { return std::holds_alternative<T>(state_); }
  explicit operator bool() const { return is_ok(); }

  // The failure; Status::ok() when a value is held.
  Status status() const { return is_ok() ? Status::ok() : std::get<Status>(state_); }

  // Precondition: is_ok(). Checked: std::bad_variant_access otherwise (a caller bug).
  T& value() & { return std::get<T>(state_); }
  const T& value() const& { return std::get<T>(state_); }
  T&& value() && { return std::get<T>(std::move(state_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::get<T>(std::move(state_)); }

 private:
  std::variant<T, Status> state_;
};

}  // namespace tensoracle

// Returns early from the enclosing function when `expr` (a Status) is not ok.
#define TO_RETURN_IF_ERROR(expr)                         \
  do {                                                   \
    ::tensoracle::Status to_status_ = (expr);            \
    if (!to_status_.is_ok()) return to_status_;          \
  } while (0)

#define TO_CONCAT_INNER_(a, b) a##b
#define TO_CONCAT_(a, b) TO_CONCAT_INNER_(a, b)

// `TO_ASSIGN_OR_RETURN(auto x, make_x());` — binds the value of a Result or returns its Status.
#define TO_ASSIGN_OR_RETURN(lhs, expr) TO_ASSIGN_OR_RETURN_IMPL_(TO_CONCAT_(to_result_, __LINE__), lhs, expr)
#define TO_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                              \
  if (!tmp.is_ok()) return tmp.status();          \
  lhs = std::move(tmp).value()

// As TO_ASSIGN_OR_RETURN, the returned Status prefixed with `context` (a string, evaluated only on
// failure): `TO_ASSIGN_OR_RETURN_CONTEXT(Dims d, parse_dims(s), fmt::format("input '{}'", s));`
#define TO_ASSIGN_OR_RETURN_CONTEXT(lhs, expr, context) \
  TO_ASSIGN_OR_RETURN_CONTEXT_IMPL_(TO_CONCAT_(to_result_, __LINE__), lhs, expr, context)
#define TO_ASSIGN_OR_RETURN_CONTEXT_IMPL_(tmp, lhs, expr, context) \
  auto tmp = (expr);                                              \
  if (!tmp.is_ok()) return tmp.status().with_context(context);    \
  lhs = std::move(tmp).value()

// Internal invariant: returns kInternal naming file:line and the condition. Never aborts.
#define TO_ASSERT(cond)                                                                       \
  do {                                                                                        \
    if (!(cond))                                                                              \
      return ::tensoracle::Status(::tensoracle::StatusCode::kInternal,                        \
                                  std::string(__FILE__ ":") + std::to_string(__LINE__) +      \
                                      ": internal invariant failed: " #cond);                 \
  } while (0)
