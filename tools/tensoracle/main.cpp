// tensoracle — build, cache, run, compare and package GPU inference engines.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "cli_output.h"
#include "command.h"
#include "command_lookup.h"
#include "tensoracle/output_files.h"
#include "tensoracle/version.h"

namespace tensoracle::cli {
namespace {

struct Entry {
  const char* name;
  int order;
  AddCommandFn add;
};

std::vector<Entry>& registry() {
  static std::vector<Entry> entries;
  return entries;
}

// tensoracle help [COMMAND [SUBCOMMAND]]: the --help of the app or of a command.
void add_help_command(CLI::App& app) {
  auto names = std::make_shared<std::vector<std::string>>();
  CLI::App* help = app.add_subcommand("help", "Describe tensoracle, or a command: tensoracle help [COMMAND [SUBCOMMAND]]");
  help->add_option("COMMAND", *names, "The command (and subcommand) to describe");
  help->callback([&app, names] {
    const CommandLookup found = look_up_command(app, *names);
    if (found.command == nullptr) fail_usage(found.error);
    // The formatter itself: App::help() would describe the subcommand being run, `help`.
    print_result(
        app.get_formatter()->make_help(found.command, command_path(*found.command), CLI::AppFormatMode::Normal));
    throw CommandExit{kExitOk};
  });
}

// --json anywhere before a "--" puts the run in --json mode (command.h).
bool asks_for_json(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--") == 0) return false;
    if (std::strcmp(argv[i], "--json") == 0) return true;
  }
  return false;
}

}  // namespace

CommandRegistration::CommandRegistration(const char* name, int order, AddCommandFn add) {
  registry().push_back({name, order, add});
}

}  // namespace tensoracle::cli

int main(int argc, char** argv) {
  using namespace tensoracle::cli;
  // An interrupted write (a multi-GB convert, say) must not leave its temporary file behind.
  tensoracle::remove_temporary_files_on_signals();
  set_json_mode(asks_for_json(argc, argv));
  CLI::App app{"tensoracle " TENSORACLE_VERSION_STRING
               " — build, cache, run and compare GPU inference engines.\n"
               "Run 'tensoracle help COMMAND' (or 'tensoracle COMMAND --help') for a command's options.",
               "tensoracle"};
  app.set_version_flag("--version", TENSORACLE_VERSION_STRING);
  app.require_subcommand(1);
  auto entries = registry();
  std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.order < b.order; });
  for (const auto& entry : entries) entry.add(app);
  add_help_command(app);
  try {
    if (const auto error = check_command_words(app, std::vector<std::string>(argv + 1, argv + argc))) fail_usage(*error);
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() != 0) print_error_object(kExitUsage, e.what());
    const int code = app.exit(e);
    return code == 0 ? kExitOk : kExitUsage;
  } catch (const CommandExit& e) {
    if (e.code != kExitOk) print_error_object(e.code, "exit status " + std::to_string(e.code));
    return e.code;
  }
  return kExitOk;
}
