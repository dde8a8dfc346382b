// tensoracle's own plugin library (libtensoracle_plugins.so, plugins/) in cuda engines:
// tensoracle::dcnv2's CUDA implementation (plugins/dcnv2/dcnv2_kernels.cu: deformable im2col,
// then the tiled GEMM with the bias fused) matches the cpu engine (its CPU implementation) on
// fresh seeded inputs, into outputs poisoned with NaN first (run_on_device), for configurations
// that exercise strides, padding, dilation, groups, deformable groups, a non-square kernel,
// offsets reaching beyond the image and GEMMs of several partial tiles:
//   fp32: rel L2 <= 1e-6 (plain fp32 FMAs; a TF32 product would miss this by two orders)
//   fp16: rel L2 <= 1e-3 (fp16 columns and outputs on both sides; fp32 sums, on the GPU by the
//         tensor cores in their own order)
#include <gtest/gtest.h>

#include "dcnv2/dcnv2_parameters.h"
#include "gpu/engine_on_device.h"
#include "gpu/gpu_testing.h"
#include "gpu/seeded_arrays.h"
#include "tensoracle/compare.h"
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

EngineBuild dcnv2_build(const Dcnv2Config& config, DataType type, const std::string& backend) {
  Dcnv2Parameters p = config.p;
  p.type = type == DataType::kFloat16 ? Dcnv2Type::kFloat16 : Dcnv2Type::kFloat32;
  EngineBuild build;
  build.name = std::string("dcnv2_") + config.name + "_" + std::string(data_type_name(type)) + "_" + backend;
  build.graph_version = "1";
  const std::vector<Dims> shapes = config.shapes();
  build.graph = [shapes, p, type](Network& net, const Weights&) {
    std::vector<Tensor> inputs;
    for (size_t i = 0; i < 5; ++i) inputs.push_back(net.add_input(kInputs[i], type, shapes[i]));
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

void check_against_cpu(DataType type, double rel_l2_limit) {
  uint32_t seed = 1500;
  for (const Dcnv2Config& config : kConfigs) {
    SCOPED_TRACE(config.name);
    auto cuda = engine_for(dcnv2_build(config, type, "cuda"));
    ASSERT_TRUE(cuda.is_ok()) << cuda.status().to_string();
    auto cpu = engine_for(dcnv2_build(config, type, "cpu"));
    ASSERT_TRUE(cpu.is_ok()) << cpu.status().to_string();
    const std::vector<Dims> shapes = config.shapes();
    // x mixed, offsets up to +-1.2 * 8 pixels (many samples off the image), mask in (0.25, 4),
    // weights and bias in [-0.5, 0.5).
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
    NamedArrayViews inputs;
    for (size_t i = 0; i < 5; ++i) inputs[kInputs[i]] = arrays[i].view();

    auto on_gpu = run_on_device(*cuda, inputs);
    ASSERT_TRUE(on_gpu.is_ok()) << on_gpu.status().to_string();
    auto reference = cpu->create_execution()->run_on_host(inputs);
    ASSERT_TRUE(reference.is_ok()) << reference.status().to_string();
    auto cmp = compare_outputs(on_gpu->at("y").view(), reference->at("y").view());
    ASSERT_TRUE(cmp.is_ok()) << cmp.status().to_string();
    std::cout << config.name << " " << data_type_name(type) << ": rel L2 " << cmp->rel_l2_error << ", max abs "
              << cmp->max_abs_error << "\n";
    EXPECT_EQ(cmp->candidate_non_finite.total(), 0) << "an output element was not written (NaN poison)";
    EXPECT_LE(cmp->rel_l2_error, rel_l2_limit);
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

}  // namespace
}  // namespace tensoracle::testing
