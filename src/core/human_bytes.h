// Byte counts for people: "512 B", "12.3 MiB", "6.4 TiB" (binary units, one decimal).
#pragma once

#include <cstdint>
#include <string>

namespace tensoracle {

std::string human_bytes(uint64_t bytes);

}  // namespace tensoracle
