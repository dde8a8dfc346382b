// tensoracle's own plugin library (libtensoracle_plugins.so, plugins/) in cuda engines:
// tensoracle::dcnv2's CUDA implementation (plugins/dcnv2/dcnv2_kernels.cu: deformable im2col,
// then the tiled GEMM with the bias fused) matches the cpu engine (its CPU implementation) on
// fresh seeded inputs, into outputs poisoned with NaN first (run_on_device), for configurations
// that exercise strides, padding, dilation, groups, deformable groups, a non-square kernel,
// offsets reaching beyond the image and GEMMs of several partial tiles:
//   fp32: rel L2 <= 1e-6 (plain fp32 FMAs; a TF32 product would miss this by two orders)
//   fp16: rel L2 <= 1e-3 (fp16 columns and outputs on both sides; fp32 sums, on the GPU by the
//         tensor cores in their own order)
// fp16 x in HWC8, the same limit:
//   - in an engine, x written by an fp16 convolution: on cuda the planner stores it channels-last,
//     which with C % 8 == 0 is already HWC8, and the plan must record that dcnv2 took x fp16/HWC8
//     in place (so the case cannot pass by reading LINEAR); the convolution is a 1x1 identity, so
//     x holds the same values on both backends and the cpu engine (x LINEAR) is the reference;
//   - driven directly (kernels from the bundle, as the cuda backend fetches them) with C = 6
//     padded to 8, the padding NaN so that a read of it shows, against the CPU implementation on
//     the same x in LINEAR: the padding no engine here reaches (its channels-last tensors with
//     C % 8 != 0 are not HWC8, and dcnv2 then takes LINEAR).
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "backends/cuda/plugin_kernels.h"
#include "dcnv2/dcnv2_parameters.h"
#include "gpu/engine_on_device.h"
#include "gpu/gpu_testing.h"
#include "gpu/seeded_arrays.h"
#include "tensoracle/compare.h"
#include "tensoracle/float_formats.h"
#include "tensoracle/plugin_registry.h"

namespace tensoracle::testing {
namespace {

using tensoracle_plugins::Dcnv2Parameters;
using tensoracle_plugins::Dcnv2Type;

PluginRegistry bundled_plugins() {
  PluginRegistry registry;
  const Status loaded = registry.load_library(TENSORACLE_PLUGINS_LIBRARY);
  EXPECT_TRUE(loaded.is_ok()) << loaded.to_string();
  return registry;
}

struct Dcnv2Config {
  const char* name;
  int64_t batch, channels, height, width, out_channels, kernel_h, kernel_w;
  Dcnv2Parameters p;  // type set per run
  int64_t out_h() const { return (height + 2 * p.padding[0] - p.dilation[0] * (kernel_h - 1) - 1) / p.stride[0] + 1; }
  int64_t out_w() const { return (width + 2 * p.padding[1] - p.dilation[1] * (kernel_w - 1) - 1) / p.stride[1] + 1; }
  std::vector<Dims> shapes() const {
    const int64_t taps = p.deformable_groups * kernel_h * kernel_w;
    return {{batch, channels, height, width},
            {batch, 2 * taps, out_h(), out_w()},
            {batch, taps, out_h(), out_w()},
            {out_channels, channels / p.groups, kernel_h, kernel_w},
            {out_channels}};
  }
};

Dcnv2Parameters params(std::array<int32_t, 2> stride, std::array<int32_t, 2> padding, std::array<int32_t, 2> dilation,
                       int32_t groups, int32_t deformable_groups) {
  Dcnv2Parameters p;
  p.stride = stride;
  p.padding = padding;
  p.dilation = dilation;
  p.groups = groups;
  p.deformable_groups = deformable_groups;
  return p;
}

const Dcnv2Config kConfigs[] = {
    {"basic", 2, 8, 12, 12, 16, 3, 3, params({1, 1}, {1, 1}, {1, 1}, 1, 1)},
    {"strided_dilated_grouped", 2, 16, 19, 17, 24, 3, 3, params({2, 2}, {2, 1}, {2, 1}, 2, 4)},
    {"nonsquare", 1, 6, 11, 14, 10, 2, 3, params({1, 2}, {0, 1}, {2, 1}, 1, 3)},
    // Several GEMM tiles in every direction, none of them full: M = 72, K = 64 * 9, P = 35 * 33.
    {"partial_tiles", 1, 64, 35, 33, 72, 3, 3, params({1, 1}, {1, 1}, {1, 1}, 1, 2)},
};
const char* const kInputs[] = {"x", "offset", "mask", "weight", "bias"};

Dcnv2Parameters typed_parameters(const Dcnv2Config& config, DataType type) {
  Dcnv2Parameters p = config.p;
  p.type = type == DataType::kFloat16 ? Dcnv2Type::kFloat16 : Dcnv2Type::kFloat32;
  return p;
}

// The [C, C, 1, 1] fp16 convolution that copies its input exactly (each product is x * 1 or
// x * 0, summed in fp32 or wider), and its zero bias.
Tensor identity_convolution(Network& net, Tensor x, int64_t channels) {
  HostArray weight = HostArray::zeros(DataType::kFloat16, {channels, channels, 1, 1}).value();
  for (int64_t c = 0; c < channels; ++c) weight.data_as<uint16_t>()[c * channels + c] = float_to_fp16(1.0f);
  Tensor w = net.add_constant(std::move(weight), "identity_w");
  Tensor b = net.add_constant(HostArray::zeros(DataType::kFloat16, {channels}).value(), "identity_b");
  return net.convolution(x, w, b);
}

// y = dcnv2(x, offset, mask, weight, bias), every input a network input; with
// `x_through_convolution`, dcnv2's x is identity_convolution(x) (fp16 only).
EngineBuild dcnv2_build(const Dcnv2Config& config, DataType type, const std::string& backend,
                        bool x_through_convolution = false) {
  const Dcnv2Parameters p = typed_parameters(config, type);
  EngineBuild build;
  build.name = std::string("dcnv2_") + config.name + "_" + std::string(data_type_name(type)) +
               (x_through_convolution ? "_after_conv_" : "_") + backend;
  build.graph_version = "1";
  const std::vector<Dims> shapes = config.shapes();
  build.graph = [shapes, p, type, x_through_convolution](Network& net, const Weights&) {
    std::vector<Tensor> inputs;
    for (size_t i = 0; i < 5; ++i) inputs.push_back(net.add_input(kInputs[i], type, shapes[i]));
    if (x_through_convolution) inputs[0] = identity_convolution(net, inputs[0], shapes[0][1]);
    std::vector<Tensor> y = net.plugin(inputs, tensoracle_plugins::kDcnv2Identity, encode(p), "dcn");
    if (!y.empty()) net.mark_output(y[0], "y");
    return net.status();
  };
  build.weights = Weights::none();
  for (size_t i = 0; i < 5; ++i) build.add_input(kInputs[i], {ShapeRange::fixed(shapes[i])});
  build.backend = backend;
  build.quiet = true;
  build.plugins = bundled_plugins();
  return build;
}

Result<Engine> engine_for(const EngineBuild& build) {
  TO_ASSIGN_OR_RETURN(std::string bytes, build_serialized_engine(build));
  return Engine::deserialize(bytes.data(), bytes.size(), build.name + ".engine", build.plugins);
}

// The five inputs of `config` in `type`, from `seed` on: x mixed, offsets up to +-1.2 * 8 pixels
// (many samples off the image), mask in (0.25, 4), weights and bias in [-0.5, 0.5).
std::vector<HostArray> seeded_inputs(const Dcnv2Config& config, DataType type, uint32_t seed) {
  const std::vector<Dims> shapes = config.shapes();
  std::vector<HostArray> arrays;
  arrays.push_back(random_array(type, shapes[0], seed++));
  HostArray offset = random_array(DataType::kFloat64, shapes[1], seed++, Fill::kGrid);
  for (int64_t i = 0; i < offset.element_count(); ++i) offset.data_as<double>()[i] *= 8.0;
  HostArray offset_typed = HostArray::zeros(type, shapes[1]).value();
  convert_elements(DataType::kFloat64, offset.data(), type, offset_typed.data(), static_cast<size_t>(offset.element_count()));
  arrays.push_back(std::move(offset_typed));
  arrays.push_back(random_array(type, shapes[2], seed++, Fill::kPositive));
  arrays.push_back(seeded(type, shapes[3], seed++));
  arrays.push_back(seeded(type, shapes[4], seed++));
  return arrays;
}

// `got` within `rel_l2_limit` of `want`, every element written.
void expect_close(const ArrayView& got, const ArrayView& want, const std::string& label, double rel_l2_limit) {
  auto cmp = compare_outputs(got, want);
  ASSERT_TRUE(cmp.is_ok()) << cmp.status().to_string();
  std::cout << label << ": rel L2 " << cmp->rel_l2_error << ", max abs " << cmp->max_abs_error << "\n";
  EXPECT_EQ(cmp->candidate_non_finite.total(), 0) << "an output element was not written (NaN poison), or HWC8 padding was read";
  EXPECT_LE(cmp->rel_l2_error, rel_l2_limit);
}

// The cuda engine on seeded inputs (into a NaN-poisoned y) against the cpu engine.
void expect_cuda_matches_cpu(const Engine& cuda, const Engine& cpu, const Dcnv2Config& config, DataType type, uint32_t seed,
                             double rel_l2_limit) {
  const std::vector<HostArray> arrays = seeded_inputs(config, type, seed);
  NamedArrayViews inputs;
  for (size_t i = 0; i < 5; ++i) inputs[kInputs[i]] = arrays[i].view();
  auto on_gpu = run_on_device(cuda, inputs);
  ASSERT_TRUE(on_gpu.is_ok()) << on_gpu.status().to_string();
  auto reference = cpu.create_execution()->run_on_host(inputs);
  ASSERT_TRUE(reference.is_ok()) << reference.status().to_string();
  expect_close(on_gpu->at("y").view(), reference->at("y").view(),
               std::string(config.name) + " " + std::string(data_type_name(type)), rel_l2_limit);
}

void check_against_cpu(DataType type, double rel_l2_limit) {
  uint32_t seed = 1500;
  for (const Dcnv2Config& config : kConfigs) {
    SCOPED_TRACE(config.name);
    auto cuda = engine_for(dcnv2_build(config, type, "cuda"));
    ASSERT_TRUE(cuda.is_ok()) << cuda.status().to_string();
    auto cpu = engine_for(dcnv2_build(config, type, "cpu"));
    ASSERT_TRUE(cpu.is_ok()) << cpu.status().to_string();
    expect_cuda_matches_cpu(*cuda, *cpu, config, type, seed, rel_l2_limit);
    seed += 5;
  }
}

TEST(CudaDcnv2, Fp32MatchesTheCpuEngine) {
  TO_SKIP_WITHOUT_GPU();
  check_against_cpu(DataType::kFloat32, 1e-6);
}

TEST(CudaDcnv2, Fp16MatchesTheCpuEngine) {
  TO_SKIP_WITHOUT_GPU();
  check_against_cpu(DataType::kFloat16, 1e-3);
}

nlohmann::json cuda_plan_layer(const Engine& engine, const std::string& name) {
  const nlohmann::json plan = nlohmann::json::parse(engine.file().plan().as_string_view());
  for (const auto& layer : plan["layers"])
    if (layer["name"] == name) return layer;
  return nullptr;
}

TEST(CudaDcnv2, Fp16XInHwc8FromAChannelsLastConvolutionMatchesTheCpuEngine) {
  TO_SKIP_WITHOUT_GPU();
  const nlohmann::json hwc8_x = nlohmann::json::array({"fp16/HWC8", "fp16/LINEAR", "fp16/LINEAR", "fp16/LINEAR", "fp16/LINEAR"});
  uint32_t seed = 1600;
  int ran = 0;
  for (const Dcnv2Config& config : kConfigs) {
    if (config.channels % 8 != 0) continue;  // channels-last is HWC8 only without padding
    SCOPED_TRACE(config.name);
    auto cuda = engine_for(dcnv2_build(config, DataType::kFloat16, "cuda", true));
    ASSERT_TRUE(cuda.is_ok()) << cuda.status().to_string();
    auto cpu = engine_for(dcnv2_build(config, DataType::kFloat16, "cpu", true));
    ASSERT_TRUE(cpu.is_ok()) << cpu.status().to_string();
    // The case is only worth its name if the plugin read the convolution's output as HWC8, in place.
    const nlohmann::json dcn = cuda_plan_layer(*cuda, "dcn");
    ASSERT_TRUE(dcn.is_object()) << cuda->file().plan().as_string_view();
    EXPECT_EQ(dcn["choice"]["formats"]["inputs"], hwc8_x) << dcn.dump();
    EXPECT_EQ(dcn["input_layouts"][0], "nhwc") << dcn.dump();
    expect_cuda_matches_cpu(*cuda, *cpu, config, DataType::kFloat16, seed, 1e-3);
    seed += 5;
    ++ran;
  }
  EXPECT_EQ(ran, 3);  // basic, strided_dilated_grouped, partial_tiles
}

// x [N, C, H, W] (fp16) laid out HWC8, the padding channels NaN.
HostArray to_hwc8_with_nan_padding(const HostArray& x) {
  const int64_t n_size = x.shape()[0], c_size = x.shape()[1], pixels = x.shape()[2] * x.shape()[3];
  const int64_t padded = (c_size + 7) / 8 * 8;
  HostArray hwc8 = HostArray::zeros(DataType::kFloat16, {n_size, x.shape()[2], x.shape()[3], padded}).value();
  for (int64_t i = 0; i < hwc8.element_count(); ++i) hwc8.data_as<uint16_t>()[i] = 0x7E00;
  for (int64_t n = 0; n < n_size; ++n)
    for (int64_t c = 0; c < c_size; ++c)
      for (int64_t p = 0; p < pixels; ++p)
        hwc8.data_as<uint16_t>()[(n * pixels + p) * padded + c] = x.data_as<uint16_t>()[(n * c_size + c) * pixels + p];
  return hwc8;
}

Result<DeviceBuffer> on_device(const void* data, size_t bytes, const char* what) {
  TO_ASSIGN_OR_RETURN(DeviceBuffer buffer, device_buffer_for(bytes, what));
  TO_RETURN_IF_ERROR(cuda_status(cudaMemcpy(buffer.data(), data, bytes, cudaMemcpyHostToDevice), what));
  return buffer;
}

TEST(CudaDcnv2, Fp16XInHwc8WithPaddingChannelsMatchesTheCpuImplementation) {
  TO_SKIP_WITHOUT_GPU();
  const Dcnv2Config& config = kConfigs[2];  // "nonsquare": C = 6, padded to 8
  ASSERT_NE(config.channels % 8, 0);
  const PluginRegistry plugins = bundled_plugins();
  auto registered = plugins.find(plugin_qualified_name(tensoracle_plugins::kDcnv2Identity),
                                 tensoracle_plugins::kDcnv2Identity.version);
  ASSERT_TRUE(registered.is_ok()) << registered.status().to_string();
  auto kernels = plugin_kernels_on_this_gpu(**registered);
  ASSERT_TRUE(kernels.is_ok()) << kernels.status().to_string();

  const std::vector<HostArray> arrays = seeded_inputs(config, DataType::kFloat16, 1700);
  const HostArray x_hwc8 = to_hwc8_with_nan_padding(arrays[0]);
  const TypeFormat linear{DataType::kFloat16, TensorFormat::kLinear};
  const std::vector<Dims> shapes = config.shapes();
  const auto descs = [&](const TypeFormat& x_format) {
    std::vector<PluginTensorDesc> inputs;
    for (size_t i = 0; i < 5; ++i) inputs.push_back({i == 0 ? x_format : linear, shapes[i]});
    return inputs;
  };
  const std::vector<PluginTensorDesc> outputs{{linear, Dims{config.batch, config.out_channels, config.out_h(), config.out_w()}}};
  const std::string parameters = encode(typed_parameters(config, DataType::kFloat16));
  HostArray reference = HostArray::zeros(DataType::kFloat16, outputs[0].shape).value();

  // The CPU implementation on x in LINEAR: the reference.
  auto cpu = create_plugin(**registered, parameters);
  ASSERT_TRUE(cpu.is_ok()) << cpu.status().to_string();
  ASSERT_TRUE((*cpu)->configure(descs(linear), outputs).is_ok());
  std::vector<unsigned char> host_workspace((*cpu)->workspace_bytes(descs(linear), outputs).value());
  PluginBuffers host{{}, {reference.data()}};
  for (const HostArray& array : arrays) host.inputs.push_back(array.data());
  ASSERT_TRUE((*cpu)->run_on_host(host, host_workspace.data()).is_ok());

  // The CUDA implementation on x in HWC8.
  const std::vector<PluginTensorDesc> hwc8_inputs = descs({DataType::kFloat16, TensorFormat::kHwc8});
  auto gpu = create_plugin(**registered, parameters);
  ASSERT_TRUE(gpu.is_ok()) << gpu.status().to_string();
  const Status attached = (*gpu)->attach_kernels(**kernels);
  ASSERT_TRUE(attached.is_ok()) << attached.to_string();
  const Status configured = (*gpu)->configure(hwc8_inputs, outputs);
  ASSERT_TRUE(configured.is_ok()) << configured.to_string();
  std::vector<DeviceBuffer> device_inputs;
  for (size_t i = 0; i < 5; ++i) {
    const HostArray& array = i == 0 ? x_hwc8 : arrays[i];
    auto buffer = on_device(array.data(), array.byte_size(), kInputs[i]);
    ASSERT_TRUE(buffer.is_ok()) << buffer.status().to_string();
    device_inputs.push_back(std::move(*buffer));
  }
  auto y = device_buffer_for(reference.byte_size(), "y");
  auto workspace = device_buffer_for((*gpu)->workspace_bytes(hwc8_inputs, outputs).value(), "workspace");
  ASSERT_TRUE(y.is_ok() && workspace.is_ok());
  CUDA_OK(cudaMemset(y->data(), 0xFF, reference.byte_size()));  // NaN: each element must be written
  PluginBuffers device_buffers{{}, {y->data()}};
  for (const DeviceBuffer& buffer : device_inputs) device_buffers.inputs.push_back(buffer.data());
  const Status ran = (*gpu)->enqueue(device_buffers, workspace->data(), nullptr);
  ASSERT_TRUE(ran.is_ok()) << ran.to_string();
  CUDA_OK(cudaDeviceSynchronize());
  HostArray got = HostArray::zeros(DataType::kFloat16, outputs[0].shape).value();
  CUDA_OK(cudaMemcpy(got.data(), y->data(), got.byte_size(), cudaMemcpyDeviceToHost));
  expect_close(got.view(), reference.view(), "nonsquare fp16/HWC8, C = 6 padded to 8", 1e-3);
}

}  // namespace
}  // namespace tensoracle::testing
