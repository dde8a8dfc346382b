// Byte sizes as people write and read them: the one parser behind every size option and
// environment variable (--max-size, --max-output-size, TENSORACLE_CACHE_MAX_SIZE, ...), and the
// one way messages print sizes.
//
//   parse_byte_size("512M")      -> 536870912
//   format_byte_size(4294967296) -> "4.0 GiB"
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "tensoracle/status.h"

namespace tensoracle {

// "512M", "10G", "1.5GiB", "2kb", "4096" (bytes); K/M/G/T are powers of 1024, with or without a
// trailing "B" or "iB", in any case. Errors quote the text and give examples.
Result<uint64_t> parse_byte_size(std::string_view text);

// "512 B", "1.5 KiB", "4.0 GiB": one decimal above 1 KiB.
std::string format_byte_size(uint64_t bytes);

}  // namespace tensoracle
