// The format test plugins (format_plugins.cpp), a library of their own:
//   test::hwc8_pair     y = 2 * x + b; x only fp16/HWC8, b only fp32/LINEAR, y written fp16/HWC8.
//                       It checks that x's padding channels hold zeros (HWC8's promise): the CPU
//                       implementation fails, the CUDA one writes NaN where they do not.
//   test::multi_format  z = x + y; x fp32/LINEAR, fp16/LINEAR or fp16/HWC8; y fp32/LINEAR or
//                       fp16/LINEAR in x's type (supports() given x's choice); z fp32/LINEAR.
// Both compute in fp32 from whatever storage they were given, walking it through element strides,
// so their results do not depend on the formats negotiated: a network with them equals the
// network with the same arithmetic in standard layers.
#pragma once

#include <cstdint>

namespace tensoracle_test_plugins {

// One tensor as the kernels walk it: fp32 (half = false) or fp16, element strides of [N, C, H, W]
// (a rank below 4 is padded with leading 1s), and for HWC8 the padded channel count (else 0).
struct FormatOperand {
  void* data = nullptr;
  bool half = false;
  int64_t stride[4] = {};
  int64_t padded_channels = 0;
};

// In CUDA builds: out = scale * a + b (b may have data == nullptr: out = scale * a) over `shape`,
// on `stream`; where a's padding channels are not zero, out is NaN. Returns the cudaError_t as int.
int launch_format_add(FormatOperand a, FormatOperand b, FormatOperand out, const int64_t shape[4], float scale,
                      void* stream);

}  // namespace tensoracle_test_plugins
