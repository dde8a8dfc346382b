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

// Prints "error: <message>" to stderr and exits with kExitUsage.
[[noreturn]] void fail_usage(const std::string& message);

}  // namespace tensoracle::cli
