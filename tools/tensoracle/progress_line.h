// A progress line on stderr for long work, about once a second: "convert: writing 1.2 GiB of
// 4.0 GiB (30%)". Nothing is printed for work that ends within the first second; on a terminal
// the line is rewritten in place, elsewhere (a log) each report is a line of its own.
#pragma once

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

#include "tensoracle/byte_size.h"

namespace tensoracle::cli {

class ProgressLine {
 public:
  explicit ProgressLine(std::string command) : command_(std::move(command)) {}
  ~ProgressLine() {
    if (printed_ && in_place_) std::fputc('\n', stderr);
  }
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  void report(const std::string& stage, uint64_t done_bytes, uint64_t total_bytes) {
    const auto now = std::chrono::steady_clock::now();
    if (now - last_ < std::chrono::seconds(1)) return;
    last_ = now;
    const double percent = total_bytes == 0 ? 100.0 : 100.0 * static_cast<double>(done_bytes) / total_bytes;
    std::fprintf(stderr, "%s%s: %s %s of %s (%.0f%%)%s", in_place_ ? "\r" : "", command_.c_str(), stage.c_str(),
                 format_byte_size(done_bytes).c_str(), format_byte_size(total_bytes).c_str(), percent,
                 in_place_ ? "\033[K" : "\n");
    std::fflush(stderr);
    printed_ = true;
  }

 private:
  std::string command_;
  bool in_place_ = ::isatty(STDERR_FILENO) == 1;
  bool printed_ = false;
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

}  // namespace tensoracle::cli
