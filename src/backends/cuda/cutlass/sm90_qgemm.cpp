#include <fmt/format.h>

#include "backends/cuda/cutlass/sm90_qgemm.h"

namespace tensoracle::backends::cuda {

const char* sm90_gemm_tile_name(Sm90GemmTile tile) {
  switch (tile) {
    case Sm90GemmTile::kCooperative128x128: return "cooperative_128x128";
    case Sm90GemmTile::kPingpong64x128: return "pingpong_64x128";
    case Sm90GemmTile::kPingpong128x128: return "pingpong_128x128";
  }
  return "?";
}

std::string Sm90QuantizedGemm::to_string() const {
  return fmt::format("{} -> {}{}{}{}, {}", data_type_name(input), data_type_name(product), residual ? " + residual" : "",
                     gelu_erf ? ", gelu_erf" : "",
                     output != product ? fmt::format(" quantized to {}", data_type_name(output)) : std::string(),
                     sm90_gemm_tile_name(tile));
}

}  // namespace tensoracle::backends::cuda
