// tensoracle — build, cache, run, compare and package GPU inference engines.
#include <algorithm>
#include <cstdio>
#include <vector>

#include "command.h"
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

}  // namespace

CommandRegistration::CommandRegistration(const char* name, int order, AddCommandFn add) {
  registry().push_back({name, order, add});
}

void fail_usage(const std::string& message) {
  std::fprintf(stderr, "error: %s\n", message.c_str());
  throw CommandExit{kExitUsage};
}

}  // namespace tensoracle::cli

int main(int argc, char** argv) {
  using namespace tensoracle::cli;
  CLI::App app{"tensoracle " TENSORACLE_VERSION_STRING
               " — build, cache, run and compare GPU inference engines.\n"
               "Run 'tensoracle COMMAND --help' for a command's options."};
  app.set_version_flag("--version", TENSORACLE_VERSION_STRING);
  app.require_subcommand(1);
  auto entries = registry();
  std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.order < b.order; });
  for (const auto& entry : entries) entry.add(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? kExitOk : kExitUsage;
  } catch (const CommandExit& e) {
    return e.code;
  }
  return kExitOk;
}
