// What main() needs of cli_output.cpp beyond command.h: the --json mode and the error object for
// failures that happen outside any command (CLI11's parse errors).
#pragma once

#include <string>

namespace tensoracle::cli {

void set_json_mode(bool json);
bool json_mode();
// In --json mode, when nothing was printed yet: {"ok": false, "error": message, "exit_code": N}.
void print_error_object(int exit_code, const std::string& message);

}  // namespace tensoracle::cli
