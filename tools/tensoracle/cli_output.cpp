// print_result, fail and the --json error object (command.h).
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli_output.h"
#include "command.h"

namespace tensoracle::cli {
namespace {

bool g_json_mode = false;
bool g_result_printed = false;

}  // namespace

void set_json_mode(bool json) { g_json_mode = json; }
bool json_mode() { return g_json_mode; }

void print_result(const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
  g_result_printed = true;
}

void print_error_object(int exit_code, const std::string& message) {
  if (!g_json_mode || g_result_printed) return;
  print_result(nlohmann::json{{"ok", false}, {"error", message}, {"exit_code", exit_code}}.dump(2) + "\n");
}

void fail(int exit_code, const std::string& message) {
  std::fprintf(stderr, "error: %s\n", message.c_str());
  print_error_object(exit_code, message);
  throw CommandExit{exit_code};
}

void fail_usage(const std::string& message) { fail(kExitUsage, message); }

}  // namespace tensoracle::cli
