// How a subcommand joins the CLI: each tools/tensoracle/<name>.cpp defines one registration.
//
//   static const CommandRegistration kCompare{"compare", 20, &add_compare_command};
//
// `add` attaches a CLI11 subcommand to the app and sets its callback. A callback reports its exit
// status by throwing CommandExit (CLI11's own mechanism for early exits).
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <utility>

#include "tensoracle/status.h"

namespace tensoracle::cli {

// Exit statuses shared by all subcommands (scripts rely on them).
inline constexpr int kExitOk = 0;
inline constexpr int kExitCheckFailed = 1;  // a gate, check or verification failed
inline constexpr int kExitUsage = 2;        // bad usage or unreadable input

struct CommandExit {
  int code;
};

using AddCommandFn = void (*)(CLI::App& app);

struct CommandRegistration {
  // `order` sorts subcommands in --help.
  CommandRegistration(const char* name, int order, AddCommandFn add);
};

// How commands print (cli_output.cpp). In --json mode (the command line holds --json) stdout gets
// exactly one JSON object, success or failure: a command prints its result with print_result; a
// failure that printed none prints {"ok": false, "error": MESSAGE, "exit_code": N} instead, for
// errors of the command line itself (CLI11's) too.

// Writes a command's result (text, or the JSON object in --json mode) to stdout.
void print_result(const std::string& text);

// Prints "error: <message>" to stderr (and, in --json mode, the error object to stdout unless a
// result was printed) and exits with `exit_code`.
[[noreturn]] void fail(int exit_code, const std::string& message);
// fail(kExitUsage, message).
[[noreturn]] void fail_usage(const std::string& message);

// The value of `result`, or fail(exit_code, its message).
template <typename T>
T value_or_fail(Result<T> result, int exit_code = kExitUsage) {
  if (!result.is_ok()) fail(exit_code, result.status().message());
  return *std::move(result);
}

}  // namespace tensoracle::cli
