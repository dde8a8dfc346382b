// Guarded calls into a plugin: every call tensoracle makes across the plugin interface except
// enqueue() (noexcept by contract) goes through call_plugin, so an exception or an error becomes
// a Status that names the plugin and the call ("plugin 'example::scale_add 1.0.0' configure: ...").
#pragma once

#include <fmt/format.h>

#include <exception>
#include <string>
#include <string_view>
#include <utility>

#include "tensoracle/status.h"

namespace tensoracle::plugin {

inline const Status& status_of(const Status& status) { return status; }
template <typename T>
Status status_of(const Result<T>& result) {
  return result.status();
}

// `fn` returns a Status or a Result<T>; call_plugin returns the same, with the plugin's errors
// given context and its exceptions caught.
template <typename Fn>
auto call_plugin(const std::string& plugin, std::string_view call, Fn&& fn) -> decltype(fn()) {
  using R = decltype(fn());
  const std::string where = fmt::format("plugin '{}' {}", plugin, call);
  try {
    R result = std::forward<Fn>(fn)();
    if (result.is_ok()) return result;
    return R(status_of(result).with_context(where));
  } catch (const std::exception& e) {
    return R(Status(StatusCode::kInternal, fmt::format("{}: threw an exception (a plugin must return errors): {}", where, e.what())));
  } catch (...) {
    return R(Status(StatusCode::kInternal, fmt::format("{}: threw an exception that is not a std::exception", where)));
  }
}

}  // namespace tensoracle::plugin
