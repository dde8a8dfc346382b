// The example bundle on a real GPU: compile it for this GPU's architecture, pick the cubin the way
// the runtime will (select_cubins_for_device), load it from memory with cudaLibraryLoadData, launch
// both kernels on seeded random non-zero inputs into poisoned outputs, and compare with the CPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "gpu/gpu_testing.h"
#include "gpu/seeded_arrays.h"
#include "tensoracle/bundle.h"

namespace tensoracle {
namespace {

namespace fs = std::filesystem;

constexpr float kPoison = -12345.678f;  // a value neither kernel can produce from these inputs

std::string read_bytes(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << file.rdbuf();
  return bytes.str();
}

// Seeded, never zero, mixed signs and magnitudes (seeded_arrays.h).
std::vector<float> random_inputs(size_t n, uint32_t seed) {
  const HostArray values = testing::random_array(DataType::kFloat32, {static_cast<int64_t>(n)}, seed);
  return std::vector<float>(values.data_as<float>(), values.data_as<float>() + n);
}

class BundleOnGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    TO_SKIP_WITHOUT_GPU();
    cudaDeviceProp properties{};
    CUDA_OK(cudaGetDeviceProperties(&properties, 0));
    sm_ = properties.major * 10 + properties.minor;
    std::string pattern = (fs::temp_directory_path() / "tensoracle-gpu-bundle-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    scratch_ = pattern;

    // Compile for this GPU (nvcc is found the documented way) and check the result first.
    CompileBundleOptions options;
    options.name = "example";
    options.version = "1.0.0";
    options.sources = {TENSORACLE_SOURCE_DIR "/examples/bundle_example/kernels/elementwise.cu",
                       TENSORACLE_SOURCE_DIR "/examples/bundle_example/kernels/binary.cu"};
    options.architectures = {GpuArch{sm_}};
    options.out_dir = (scratch_ / "bundle").string();
    auto manifest = compile_bundle(options);
    ASSERT_TRUE(manifest.is_ok()) << manifest.status().message();
    auto report = inspect_bundle(options.out_dir);
    ASSERT_TRUE(report.is_ok()) << report.status().message();
    ASSERT_TRUE(report->passed()) << inspect_report_to_text(*report);
    manifest_ = *manifest;
  }

  void TearDown() override {
    std::error_code error;
    if (!scratch_.empty()) fs::remove_all(scratch_, error);
  }

  // Loads the cubin that defines `kernel` and returns the kernel handle.
  void load_kernel(const std::string& kernel, cudaLibrary_t* library, cudaKernel_t* handle) {
    for (const BundleCubin& cubin : select_cubins_for_device(manifest_, sm_)) {
      if (std::find(cubin.kernels.begin(), cubin.kernels.end(), kernel) == cubin.kernels.end()) continue;
      const std::string image = read_bytes(scratch_ / "bundle" / cubin.path);
      CUDA_OK(cudaLibraryLoadData(library, image.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
      CUDA_OK(cudaLibraryGetKernel(handle, *library, kernel.c_str()));
      return;
    }
    FAIL() << "no cubin for sm_" << sm_ << " defines " << kernel;
  }

  int sm_ = 0;
  fs::path scratch_;
  BundleManifest manifest_;
};

// An odd size, larger than one grid pass, so the grid-stride loop and the tail are exercised.
constexpr int64_t kCount = (1 << 20) + 37;

TEST_F(BundleOnGpu, ScaleBiasMatchesTheCpu) {
  cudaLibrary_t library = nullptr;
  cudaKernel_t kernel = nullptr;
  load_kernel("scale_bias", &library, &kernel);
  const std::vector<float> x = random_inputs(kCount, 1);
  float scale = 1.75f, bias = -0.3125f;
  float *d_x = nullptr, *d_y = nullptr;
  CUDA_OK(cudaMalloc(&d_x, kCount * sizeof(float)));
  CUDA_OK(cudaMalloc(&d_y, kCount * sizeof(float)));
  CUDA_OK(cudaMemcpy(d_x, x.data(), kCount * sizeof(float), cudaMemcpyHostToDevice));
  std::vector<float> y(kCount, kPoison);
  CUDA_OK(cudaMemcpy(d_y, y.data(), kCount * sizeof(float), cudaMemcpyHostToDevice));
  int64_t n = kCount;
  void* args[] = {&d_x, &d_y, &scale, &bias, &n};
  CUDA_OK(cudaLaunchKernel(reinterpret_cast<const void*>(kernel), dim3(256), dim3(256), args, 0, nullptr));
  CUDA_OK(cudaDeviceSynchronize());
  CUDA_OK(cudaMemcpy(y.data(), d_y, kCount * sizeof(float), cudaMemcpyDeviceToHost));
  int64_t mismatches = 0;
  for (int64_t i = 0; i < kCount; ++i) {
    // nvcc contracts x * scale + bias into one FMA; std::fma rounds the same way.
    const float expected = std::fma(x[i], scale, bias);
    if (y[i] != expected && mismatches++ < 5) ADD_FAILURE() << "y[" << i << "] = " << y[i] << ", expected " << expected;
  }
  EXPECT_EQ(mismatches, 0);
  cudaFree(d_x);
  cudaFree(d_y);
  CUDA_OK(cudaLibraryUnload(library));
}

TEST_F(BundleOnGpu, GatedResidualMatchesTheCpu) {
  cudaLibrary_t library = nullptr;
  cudaKernel_t kernel = nullptr;
  load_kernel("gated_residual", &library, &kernel);
  const std::vector<float> a = random_inputs(kCount, 2), b = random_inputs(kCount, 3);
  float alpha = 0.5f;
  float *d_a = nullptr, *d_b = nullptr, *d_out = nullptr;
  const size_t bytes = kCount * sizeof(float);
  CUDA_OK(cudaMalloc(&d_a, bytes));
  CUDA_OK(cudaMalloc(&d_b, bytes));
  CUDA_OK(cudaMalloc(&d_out, bytes));
  CUDA_OK(cudaMemcpy(d_a, a.data(), bytes, cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemcpy(d_b, b.data(), bytes, cudaMemcpyHostToDevice));
  std::vector<float> out(kCount, kPoison);
  CUDA_OK(cudaMemcpy(d_out, out.data(), bytes, cudaMemcpyHostToDevice));
  int64_t n = kCount;
  void* args[] = {&d_a, &d_b, &d_out, &alpha, &n};
  CUDA_OK(cudaLaunchKernel(reinterpret_cast<const void*>(kernel), dim3(256), dim3(256), args, 0, nullptr));
  CUDA_OK(cudaDeviceSynchronize());
  CUDA_OK(cudaMemcpy(out.data(), d_out, bytes, cudaMemcpyDeviceToHost));
  int64_t mismatches = 0;
  for (int64_t i = 0; i < kCount; ++i) {
    // Whether nvcc fuses a*b + alpha*a into FMAs is its choice: allow a few ulps of the result's
    // scale, computed in double.
    const double expected = static_cast<double>(a[i]) * b[i] + static_cast<double>(alpha) * a[i];
    const double scale = std::abs(static_cast<double>(a[i]) * b[i]) + std::abs(static_cast<double>(alpha) * a[i]);
    if (std::abs(out[i] - expected) > 4 * 0x1p-24 * scale && mismatches++ < 5) {
      ADD_FAILURE() << "out[" << i << "] = " << out[i] << ", expected " << expected;
    }
  }
  EXPECT_EQ(mismatches, 0);
  cudaFree(d_a);
  cudaFree(d_b);
  cudaFree(d_out);
  CUDA_OK(cudaLibraryUnload(library));
}

}  // namespace
}  // namespace tensoracle
