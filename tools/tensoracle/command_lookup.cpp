// look_up_command and check_command_words (command_lookup.h).
#include "command_lookup.h"

#include <algorithm>

#include "io/safetensors_names.h"

namespace tensoracle::cli {
namespace {

std::string names_of(const std::vector<const CLI::App*>& commands) {
  std::string list;
  for (const CLI::App* command : commands) list += (list.empty() ? "" : ", ") + command->get_name();
  return list;
}

// "tensoracle help" followed by the path of `command` below the app: "tensoracle help cache".
std::string help_for(const CLI::App& command) {
  const CLI::App* app = &command;
  while (app->get_parent() != nullptr) app = app->get_parent();
  const std::string path = command_path(command);
  return app->get_name() + " help" + path.substr(app->get_name().size());
}

// The known name a mistyped `word` most likely meant: a unique prefix match, else the nearest by
// edit distance when it is close (at most 2 edits, and fewer than half the word).
std::optional<std::string> nearest(const std::vector<const CLI::App*>& commands, const std::string& word) {
  std::vector<std::string> prefixed;
  for (const CLI::App* command : commands)
    if (command->get_name().rfind(word, 0) == 0) prefixed.push_back(command->get_name());
  if (prefixed.size() == 1) return prefixed.front();
  std::optional<std::string> best;
  size_t best_distance = 3;
  for (const CLI::App* command : commands) {
    const size_t distance = edit_distance(command->get_name(), word);
    if (distance < best_distance && 2 * distance < std::max<size_t>(word.size(), 2)) {
      best = command->get_name();
      best_distance = distance;
    }
  }
  return best;
}

std::string unknown(const CLI::App& parent, const std::string& word) {
  const auto commands = commands_of(parent);
  const auto guess = nearest(commands, word);
  const std::string path = command_path(parent);
  return "unknown command '" + word + "' for '" + path + "'" + (guess ? "; did you mean '" + *guess + "'?" : std::string()) +
         " (commands: " + names_of(commands) + "; '" + help_for(parent) + " COMMAND' describes one)";
}

}  // namespace

std::string command_path(const CLI::App& command) {
  std::string path = command.get_name();
  for (const CLI::App* parent = command.get_parent(); parent != nullptr; parent = parent->get_parent())
    path = parent->get_name() + " " + path;
  return path;
}

std::vector<const CLI::App*> commands_of(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App*) { return true; });
}

CommandLookup look_up_command(const CLI::App& app, const std::vector<std::string>& names) {
  const CLI::App* current = &app;
  for (const std::string& name : names) {
    const auto commands = commands_of(*current);
    const auto found = std::find_if(commands.begin(), commands.end(),
                                    [&](const CLI::App* command) { return command->get_name() == name; });
    if (found == commands.end()) return {nullptr, unknown(*current, name)};
    current = *found;
  }
  return {current, ""};
}

std::optional<std::string> check_command_words(const CLI::App& app, const std::vector<std::string>& args) {
  const CLI::App* current = &app;
  for (const std::string& word : args) {
    if (commands_of(*current).empty()) return std::nullopt;  // a command's own arguments from here on
    if (word.empty() || word[0] == '-') return std::nullopt;  // --help, --version: CLI11's
    const CommandLookup found = look_up_command(*current, {word});
    if (found.command == nullptr) return found.error;
    current = found.command;
  }
  if (current->get_require_subcommand_min() == 0) return std::nullopt;
  return "'" + command_path(*current) + "' needs a command: " + names_of(commands_of(*current)) + " ('" + help_for(*current) +
         (current == &app ? " COMMAND' describes one)" : "' describes them)");
}

}  // namespace tensoracle::cli
