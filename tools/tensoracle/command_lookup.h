// Finding the command a command line names, before CLI11 parses it: an unknown or missing command
// is reported by name, with the nearest known one ("did you mean 'build'?"), instead of CLI11's
// "A subcommand is required".
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

namespace tensoracle::cli {

// "tensoracle cache prune": the names from the app down to `command`.
std::string command_path(const CLI::App& command);

// The commands of `app` (its subcommands), in --help order.
std::vector<const CLI::App*> commands_of(const CLI::App& app);

// Follows `names` down from `app` ("cache", "prune"): the command they name, or the message
// naming the first that is not a command there, with the nearest one and the list.
struct CommandLookup {
  const CLI::App* command = nullptr;
  std::string error;
};
CommandLookup look_up_command(const CLI::App& app, const std::vector<std::string>& names);

// Checks the words of argv[1..] that name commands (up to the first option or the first command
// that takes no subcommand): an error message for an unknown one, or for a group ("cache") given
// without its command; nullopt when CLI11 can take it from there.
std::optional<std::string> check_command_words(const CLI::App& app, const std::vector<std::string>& args);

}  // namespace tensoracle::cli
