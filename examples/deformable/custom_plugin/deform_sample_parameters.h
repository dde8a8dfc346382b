// The identity and parameters of deformable::deform_sample 1.0.0, the deformable example's custom
// cubin plugin (README.md beside this file): what a network's plugin layer passes and what an
// engine stores. Header-only: the example package includes it to make the layer.
//
//   std::vector<Tensor> columns = net.plugin({x, offset_mask}, deformable::kDeformSampleIdentity,
//                                            deformable::encode_deform_sample(DataType::kFloat16), "dcn.sample");
//
// Serialized form: one little-endian int32, the element type (0 fp32, 1 fp16) of offset_mask and
// the output (x's type too; its format may be LINEAR or, for fp16, HWC8). decode checks the bytes
// (they come from engine files): a wrong size or an unknown type is an error naming it.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "tensoracle/plugin.h"
#include "tensoracle/status.h"

namespace deformable {

inline const tensoracle::PluginIdentity kDeformSampleIdentity{"deform_sample", "1.0.0", "deformable"};

inline std::string encode_deform_sample(tensoracle::DataType type) {
  const int32_t code = type == tensoracle::DataType::kFloat16 ? 1 : 0;
  char bytes[4];
  for (int i = 0; i < 4; ++i) bytes[i] = static_cast<char>((static_cast<uint32_t>(code) >> (8 * i)) & 0xFF);
  return std::string(bytes, 4);
}

inline tensoracle::Result<tensoracle::DataType> decode_deform_sample(std::string_view bytes) {
  if (bytes.size() != 4)
    return tensoracle::Status(tensoracle::StatusCode::kInvalidArgument,
                              "parameters must be 4 bytes (the element type), got " + std::to_string(bytes.size()));
  uint32_t code = 0;
  for (int i = 0; i < 4; ++i) code |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[static_cast<size_t>(i)])) << (8 * i);
  if (code == 0) return tensoracle::DataType::kFloat32;
  if (code == 1) return tensoracle::DataType::kFloat16;
  return tensoracle::Status(tensoracle::StatusCode::kInvalidArgument,
                            "element type " + std::to_string(code) + " is not 0 (fp32) or 1 (fp16)");
}

}  // namespace deformable
