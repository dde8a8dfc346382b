// The parameters of tensoracle::dcnv2 1.0.0 (modulated deformable convolution, DCNv2) and their
// serialized form: what a network's plugin layer passes and what an engine stores.
//
//   tensoracle_plugins::Dcnv2Parameters p;
//   p.stride = {2, 2};
//   p.padding = {1, 1};
//   std::vector<Tensor> y = net.plugin({x, offset, mask, weight, bias}, tensoracle_plugins::kDcnv2Identity,
//                                      tensoracle_plugins::encode(p), "dcn");
//
// Serialized form: nine little-endian int32, 36 bytes, in this order: stride h, w; padding h, w;
// dilation h, w; groups; deformable groups; element type (0 fp32, 1 fp16). The type is a parameter
// because the declaration names the output's type and a plugin is made from its parameters alone.
// decode() treats the bytes as untrusted (they come from engine files): a wrong size, a stride,
// dilation or group count below 1, a negative padding, a value above kDcnv2MaxParameter or an
// unknown type is an error naming the field and the value.
//
// Header-only, like the plugin interface: packages that build dcnv2 layers include it.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "tensoracle/plugin.h"
#include "tensoracle/status.h"

namespace tensoracle_plugins {

inline const tensoracle::PluginIdentity kDcnv2Identity{"dcnv2", "1.0.0", "tensoracle"};

// A bound well above any real convolution that keeps every index computation inside int64.
inline constexpr int32_t kDcnv2MaxParameter = 1 << 16;

enum class Dcnv2Type : int32_t { kFloat32 = 0, kFloat16 = 1 };

struct Dcnv2Parameters {
  std::array<int32_t, 2> stride{1, 1};    // h, w
  std::array<int32_t, 2> padding{0, 0};   // h, w
  std::array<int32_t, 2> dilation{1, 1};  // h, w
  int32_t groups = 1;                     // convolution groups: C and K divisible by it
  int32_t deformable_groups = 1;          // offset/mask groups: C divisible by it
  Dcnv2Type type = Dcnv2Type::kFloat32;   // of every input and the output
};

inline constexpr size_t kDcnv2ParameterCount = 9;

inline std::string encode(const Dcnv2Parameters& p) {
  const int32_t values[kDcnv2ParameterCount] = {p.stride[0],   p.stride[1],   p.padding[0],
                                                p.padding[1],  p.dilation[0], p.dilation[1],
                                                p.groups,      p.deformable_groups, static_cast<int32_t>(p.type)};
  std::string bytes(sizeof values, '\0');
  for (size_t i = 0; i < kDcnv2ParameterCount; ++i)
    for (size_t b = 0; b < 4; ++b)
      bytes[4 * i + b] = static_cast<char>((static_cast<uint32_t>(values[i]) >> (8 * b)) & 0xFFu);
  return bytes;
}

// The parameters from the first eight serialized values (stride h, w; padding h, w; dilation h, w;
// groups; deformable groups) and a type, unchecked: decode() checks them first.
inline Dcnv2Parameters from_values(const int32_t* v, Dcnv2Type type) {
  Dcnv2Parameters p;
  p.stride = {v[0], v[1]};
  p.padding = {v[2], v[3]};
  p.dilation = {v[4], v[5]};
  p.groups = v[6];
  p.deformable_groups = v[7];
  p.type = type;
  return p;
}

inline tensoracle::Result<Dcnv2Parameters> decode(std::string_view bytes) {
  using tensoracle::Status;
  using tensoracle::StatusCode;
  constexpr size_t kBytes = 4 * kDcnv2ParameterCount;
  if (bytes.size() != kBytes)
    return Status(StatusCode::kInvalidArgument, "parameters must be " + std::to_string(kBytes) +
                                                    " bytes (nine int32: stride, padding, dilation, groups, "
                                                    "deformable groups, type), got " +
                                                    std::to_string(bytes.size()));
  int32_t v[kDcnv2ParameterCount];
  for (size_t i = 0; i < kDcnv2ParameterCount; ++i) {
    uint32_t u = 0;
    for (size_t b = 0; b < 4; ++b) u |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[4 * i + b])) << (8 * b);
    std::memcpy(&v[i], &u, sizeof u);
  }
  static const char* const kNames[kDcnv2ParameterCount] = {"stride h", "stride w", "padding h", "padding w", "dilation h",
                                                           "dilation w", "groups", "deformable groups", "type"};
  for (size_t i = 0; i + 1 < kDcnv2ParameterCount; ++i) {
    const bool is_padding = i == 2 || i == 3;
    const int32_t lowest = is_padding ? 0 : 1;
    if (v[i] < lowest || v[i] > kDcnv2MaxParameter)
      return Status(StatusCode::kInvalidArgument, std::string(kNames[i]) + " is " + std::to_string(v[i]) +
                                                      "; it must be in [" + std::to_string(lowest) + ", " +
                                                      std::to_string(kDcnv2MaxParameter) + "]");
  }
  if (v[8] != static_cast<int32_t>(Dcnv2Type::kFloat32) && v[8] != static_cast<int32_t>(Dcnv2Type::kFloat16))
    return Status(StatusCode::kInvalidArgument,
                  "type is " + std::to_string(v[8]) + "; it must be 0 (fp32) or 1 (fp16)");
  return from_values(v, static_cast<Dcnv2Type>(v[8]));
}

}  // namespace tensoracle_plugins
