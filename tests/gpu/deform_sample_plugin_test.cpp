// deformable::deform_sample (examples/deformable/custom_plugin), the deformable example's custom
// cubin plugin, driven directly through the plugin API on the GPU: its kernels fetched from its
// cubin bundle (load_plugin_kernels, as the cuda backend does), each of fp32/LINEAR, fp16/LINEAR
// and fp16/HWC8 (laid out here: C = 13 padded to 16, the padding NaN so a read of it shows) run on
// seeded inputs into NaN-poisoned columns and compared with the CPU implementation on the same
// values in LINEAR: fp32 within rel L2 1e-6, fp16 within 1e-3 (fp16 columns on both sides). The
// HWC8 kernel is reached only this way today: the builder hands plugins LINEAR inputs.
#include <gtest/gtest.h>

#include <cstring>
#include <iostream>
#include <random>

#include "backends/cuda/plugin_kernels.h"
#include "deformable/custom_plugin/deform_sample_parameters.h"
#include "gpu/gpu_testing.h"
#include "tensoracle/compare.h"
#include "tensoracle/float_formats.h"
#include "tensoracle/plugin_registry.h"

namespace tensoracle {
namespace {

using testing::DeviceBuffer;

constexpr int64_t kN = 2, kC = 13, kPaddedC = 16, kH = 9, kW = 11, kPixels = kH * kW;
constexpr int64_t kColumns = kN * kC * 9 * kPixels;

struct Case {
  const char* name;
  TypeFormat x;
  double rel_l2_limit;
};

// Element i of `values` in `type` (fp32 or fp16) into bytes.
std::vector<char> typed(const std::vector<float>& values, DataType type) {
  const size_t size = type == DataType::kFloat16 ? 2 : 4;
  std::vector<char> bytes(values.size() * size);
  for (size_t i = 0; i < values.size(); ++i) {
    if (type == DataType::kFloat16) {
      const uint16_t h = float_to_fp16(values[i]);
      std::memcpy(bytes.data() + 2 * i, &h, 2);
    } else {
      std::memcpy(bytes.data() + 4 * i, &values[i], 4);
    }
  }
  return bytes;
}

Result<DeviceBuffer> on_device(const std::vector<char>& bytes, const char* what) {
  TO_ASSIGN_OR_RETURN(DeviceBuffer buffer, DeviceBuffer::allocate(bytes.size(), what));
  if (cudaMemcpy(buffer.data(), bytes.data(), bytes.size(), cudaMemcpyHostToDevice) != cudaSuccess)
    return Status(StatusCode::kCudaError, std::string("copy ") + what);
  return buffer;
}

TEST(DeformSamplePluginOnCuda, EachKernelFromTheBundleMatchesTheCpuImplementation) {
  TO_SKIP_WITHOUT_GPU();
  PluginRegistry plugins;
  ASSERT_TRUE(plugins.load_library(DEFORM_SAMPLE_PLUGIN_LIBRARY).is_ok());
  auto registered = plugins.find("deformable::deform_sample", "1.0.0");
  ASSERT_TRUE(registered.is_ok()) << registered.status().to_string();
  auto kernels = testing::plugin_kernels_on_this_gpu(**registered);
  ASSERT_TRUE(kernels.is_ok()) << kernels.status().to_string();

  // x in [-1, 1], offsets up to 3 pixels (samples between pixels, on and beyond the edges), mask
  // logits in [-3, 3]; rounded to fp16 first, so both types sample the same values.
  std::mt19937 rng(1515);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(kN * kC * kPixels)), offset_mask(static_cast<size_t>(kN * 27 * kPixels));
  for (float& v : x) v = fp16_to_float(float_to_fp16(unit(rng)));
  for (float& v : offset_mask) v = fp16_to_float(float_to_fp16(3.0f * unit(rng)));
  std::vector<float> x_hwc8(static_cast<size_t>(kN * kPixels * kPaddedC), NAN);
  for (int64_t n = 0; n < kN; ++n)
    for (int64_t c = 0; c < kC; ++c)
      for (int64_t p = 0; p < kPixels; ++p)
        x_hwc8[static_cast<size_t>((n * kPixels + p) * kPaddedC + c)] = x[static_cast<size_t>((n * kC + c) * kPixels + p)];

  for (const Case& c : {Case{"fp32/LINEAR", {DataType::kFloat32, TensorFormat::kLinear}, 1e-6},
                        Case{"fp16/LINEAR", {DataType::kFloat16, TensorFormat::kLinear}, 1e-3},
                        Case{"fp16/HWC8", {DataType::kFloat16, TensorFormat::kHwc8}, 1e-3}}) {
    SCOPED_TRACE(c.name);
    const DataType type = c.x.type;
    const TypeFormat linear{type, TensorFormat::kLinear};
    const Dims columns_shape{kN, kC * 9, kPixels};
    const std::vector<char> x_bytes = typed(c.x.format == TensorFormat::kHwc8 ? x_hwc8 : x, type);
    const std::vector<char> linear_x_bytes = typed(x, type), om_bytes = typed(offset_mask, type);

    // The CPU implementation on LINEAR x: the reference.
    auto cpu = registered.value()->creator.create(deformable::encode_deform_sample(type));
    ASSERT_TRUE(cpu.is_ok()) << cpu.status().to_string();
    ASSERT_TRUE((*cpu)->configure({{linear, Dims{kN, kC, kH, kW}}, {linear, Dims{kN, 27, kH, kW}}}, {{linear, columns_shape}}).is_ok());
    std::vector<char> reference(static_cast<size_t>(kColumns) * (type == DataType::kFloat16 ? 2 : 4));
    ASSERT_TRUE((*cpu)->run_on_host({{linear_x_bytes.data(), om_bytes.data()}, {reference.data()}}, nullptr).is_ok());

    auto gpu = registered.value()->creator.create(deformable::encode_deform_sample(type));
    ASSERT_TRUE(gpu.is_ok()) << gpu.status().to_string();
    const Status attached = (*gpu)->attach_kernels(**kernels);
    ASSERT_TRUE(attached.is_ok()) << attached.to_string();
    const Status configured =
        (*gpu)->configure({{c.x, Dims{kN, kC, kH, kW}}, {linear, Dims{kN, 27, kH, kW}}}, {{linear, columns_shape}});
    ASSERT_TRUE(configured.is_ok()) << configured.to_string();
    auto x_device = on_device(x_bytes, "x");
    auto om_device = on_device(om_bytes, "offset_mask");
    auto columns_device = DeviceBuffer::allocate(reference.size(), "columns");
    ASSERT_TRUE(x_device.is_ok() && om_device.is_ok() && columns_device.is_ok());
    CUDA_OK(cudaMemset(columns_device->data(), 0xFF, reference.size()));  // NaN: each element must be written
    const Status ran = (*gpu)->enqueue({{x_device->data(), om_device->data()}, {columns_device->data()}}, nullptr, nullptr);
    ASSERT_TRUE(ran.is_ok()) << ran.to_string();
    CUDA_OK(cudaDeviceSynchronize());
    std::vector<char> got(reference.size());
    CUDA_OK(cudaMemcpy(got.data(), columns_device->data(), got.size(), cudaMemcpyDeviceToHost));

    auto cmp = compare_outputs(ArrayView{type, columns_shape, got.data()}, ArrayView{type, columns_shape, reference.data()});
    ASSERT_TRUE(cmp.is_ok()) << cmp.status().to_string();
    std::cout << c.name << " cuda vs cpu: rel L2 " << cmp->rel_l2_error << ", max abs " << cmp->max_abs_error << "\n";
    EXPECT_EQ(cmp->candidate_non_finite.total(), 0) << "a column element was not written, or the HWC8 padding was read";
    EXPECT_LE(cmp->rel_l2_error, c.rel_l2_limit);
  }
}

}  // namespace
}  // namespace tensoracle
