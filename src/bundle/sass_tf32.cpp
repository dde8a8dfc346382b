#include "bundle/sass_tf32.h"

#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <regex>
#include <sstream>

#include "bundle/process.h"
#include "core/errors.h"

namespace tensoracle::bundle {
namespace {

std::string trim(const std::string& text) {
  const size_t begin = text.find_first_not_of(" \t");
  const size_t end = text.find_last_not_of(" \t\r");
  return begin == std::string::npos ? std::string() : text.substr(begin, end - begin + 1);
}

}  // namespace

std::vector<std::string> scan_sass_for_tf32(const std::string& sass) {
  // "        /*0230*/   HMMA.1684.F32.TF32 R12, R8.reuse, R18, RZ ;   /* 0x... */"
  static const std::regex instruction(R"(^\s*/\*[0-9a-f]+\*/\s+([^;]*;))");
  static const std::regex tf32_mnemonic(R"(^(@!?U?P\w+\s+)?[A-Z0-9_]+(\.[A-Z0-9_]+)*\.TF32\b)");
  std::vector<std::string> found;
  std::string kernel = "?";
  std::istringstream lines(sass);
  for (std::string line; std::getline(lines, line);) {
    const size_t function = line.find("Function : ");
    if (function != std::string::npos) {
      kernel = trim(line.substr(function + 11));
      continue;
    }
    std::smatch match;
    if (!std::regex_search(line, match, instruction)) continue;
    const std::string text = trim(match[1].str());
    if (std::regex_search(text, tf32_mnemonic)) found.push_back(kernel + ": " + text);
  }
  return found;
}

Result<std::vector<std::string>> find_tf32_instructions(const std::string& cuobjdump, const std::string& cubin) {
  const char* tmpdir = std::getenv("TMPDIR");
  std::string path = std::string(tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp") + "/tensoracle-sass-XXXXXX";
  const int fd = mkstemp(path.data());
  if (fd < 0) return io_error("cannot create a temporary file for cuobjdump");
  const bool written = write(fd, cubin.data(), cubin.size()) == static_cast<ssize_t>(cubin.size());
  close(fd);
  Result<ProcessResult> result = written ? run_process({cuobjdump, "-sass", path})
                                         : Result<ProcessResult>(io_error("cannot write '{}'", path));
  std::remove(path.c_str());
  if (!result) return result.status();
  if (result->exit_code != 0) {
    return io_error("'{} -sass' failed (exit code {}): {}", cuobjdump, result->exit_code,
                    result->output.substr(0, 2000));
  }
  return scan_sass_for_tf32(result->output);
}

}  // namespace tensoracle::bundle
