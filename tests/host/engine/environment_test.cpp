// The environment record and the compatibility check: each rule, with the reason it gives.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include "backends/registry.h"
#include "tensoracle/environment.h"

namespace tensoracle {
namespace {

GpuProperties h200() {
  GpuProperties gpu;
  gpu.name = "NVIDIA H200";
  gpu.compute_capability_major = 9;
  gpu.compute_capability_minor = 0;
  gpu.sm_count = 132;
  gpu.l2_cache_bytes = 60 << 20;
  gpu.memory_bus_width_bits = 6144;
  gpu.shared_memory_per_block_optin_bytes = 232448;
  gpu.shared_memory_per_sm_bytes = 233472;
  gpu.total_memory_bytes = int64_t{150} << 30;
  gpu.ecc_enabled = true;
  return gpu;
}

Environment cuda_environment() {
  Environment environment;
  environment.backend = "cuda";
  environment.gpu = h200();
  environment.cuda = CudaVersions{"13.0", "13.0", "13.0.0", "9.10.2"};
  environment.tensoracle_version = "0.1.0";
  environment.os = "Linux";
  environment.cpu_arch = "x86_64";
  return environment;
}

std::vector<std::string> fields(const std::vector<Incompatibility>& found) {
  std::vector<std::string> out;
  for (const auto& item : found) out.push_back(item.field);
  return out;
}

TEST(Environment, JsonRoundTrips) {
  const Environment environment = cuda_environment();
  const std::string text = environment_to_json(environment);
  auto parsed = environment_from_json(text, "env.json");
  ASSERT_TRUE(parsed.is_ok()) << parsed.status().to_string();
  EXPECT_EQ(*parsed, environment);
  EXPECT_NE(text.find("\"compute_capability\": \"9.0\""), std::string::npos) << text;
}

TEST(Environment, AbsentGpuIsAnExplicitNull) {
  auto cpu = probe_environment("cpu");
  ASSERT_TRUE(cpu.is_ok());
  EXPECT_FALSE(cpu->gpu.has_value());
  const std::string text = environment_to_json(*cpu);
  EXPECT_NE(text.find("\"gpu\": null"), std::string::npos) << text;
  EXPECT_NE(text.find("\"cuda\": null"), std::string::npos) << text;
  EXPECT_FALSE(cpu->os.empty());
  EXPECT_FALSE(cpu->cpu_arch.empty());
}

bool build_has_cuda() {
  const std::vector<std::string> names = backends::backend_names();
  return std::find(names.begin(), names.end(), "cuda") != names.end();
}

TEST(Environment, CudaProbeWithoutAGpuSaysWhy) {
  if (!build_has_cuda()) GTEST_SKIP() << "this build has no cuda backend (TENSORACLE_BUILD_CUDA=OFF)";
  auto cuda = probe_environment("cuda");
  ASSERT_TRUE(cuda.is_ok());
  if (cuda->gpu) GTEST_SKIP() << "this machine has a GPU: " << cuda->gpu->name;
  EXPECT_FALSE(cuda->cuda_unavailable_reason.empty());
}

// On a GPU machine (in a CUDA build) the probe fills every field.
TEST(Environment, CudaProbeOnAGpuFillsEveryField) {
  if (!build_has_cuda()) GTEST_SKIP() << "this build has no cuda backend (TENSORACLE_BUILD_CUDA=OFF)";
  auto cuda = probe_environment("cuda");
  ASSERT_TRUE(cuda.is_ok());
  if (!cuda->gpu) GTEST_SKIP() << "no GPU here: " << cuda->cuda_unavailable_reason;
  EXPECT_FALSE(cuda->gpu->name.empty());
  EXPECT_GE(cuda->gpu->compute_capability_major, 7);
  EXPECT_GT(cuda->gpu->sm_count, 0);
  EXPECT_GT(cuda->gpu->l2_cache_bytes, 0);
  EXPECT_GT(cuda->gpu->memory_bus_width_bits, 0);
  EXPECT_GT(cuda->gpu->shared_memory_per_block_optin_bytes, 0);
  EXPECT_GT(cuda->gpu->shared_memory_per_sm_bytes, 0);
  EXPECT_GT(cuda->gpu->total_memory_bytes, 0);
  ASSERT_TRUE(cuda->cuda.has_value());
  for (const std::string* version : {&cuda->cuda->runtime, &cuda->cuda->driver, &cuda->cuda->cublaslt, &cuda->cuda->cudnn})
    EXPECT_NE(version->find('.'), std::string::npos) << *version;
  EXPECT_GE(compare_versions(cuda->cuda->driver, cuda->cuda->runtime), 0);
  std::printf("%s\n", environment_to_json(*cuda).c_str());
}

TEST(Environment, UnknownBackendIsAnErrorNamingTheBackendsOfThisBuild) {
  auto bad = probe_environment("tpu");
  ASSERT_FALSE(bad.is_ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kNotFound);
  EXPECT_NE(bad.status().message().find("'tpu'"), std::string::npos);
  for (const std::string& name : backends::backend_names())
    EXPECT_NE(bad.status().message().find(name), std::string::npos) << bad.status().message();
}

TEST(Environment, MalformedJsonNamesTheField) {
  std::string text = environment_to_json(cuda_environment());
  text.replace(text.find("\"sm_count\": 132"), 15, "\"sm_count\": \"132\"");
  auto parsed = environment_from_json(text, "env.json");
  ASSERT_FALSE(parsed.is_ok());
  EXPECT_NE(parsed.status().message().find("env.json: /gpu/sm_count: expected an integer in [0, 2147483647], got \"132\""), std::string::npos)
      << parsed.status().message();
}

TEST(Compatibility, SameEnvironmentIsCompatible) {
  EXPECT_TRUE(find_incompatibilities(cuda_environment(), {}, cuda_environment(), {}).empty());
}

TEST(Compatibility, EachRuleReportsItsField) {
  struct Case {
    const char* name;
    void (*change)(Environment&);
    std::vector<std::string> expected;
  };
  const Case cases[] = {
      {"other backend", [](Environment& e) { e.backend = "cpu"; }, {"backend"}},
      {"no gpu", [](Environment& e) { e.gpu.reset(); e.cuda_unavailable_reason = "no CUDA in this build"; }, {"gpu"}},
      {"other compute capability",
       [](Environment& e) {
         e.gpu->compute_capability_major = 8;
         e.gpu->compute_capability_minor = 6;
       },
       {"gpu.compute_capability"}},
      {"other gpu", [](Environment& e) { e.gpu->name = "NVIDIA H100"; }, {"gpu.name"}},
      {"old driver", [](Environment& e) { e.cuda->driver = "12.8"; }, {"cuda.driver"}},
      {"newer driver is fine", [](Environment& e) { e.cuda->driver = "13.2"; }, {}},
      {"other cublaslt", [](Environment& e) { e.cuda->cublaslt = "13.1.0"; }, {"cuda.cublaslt"}},
      {"other cudnn", [](Environment& e) { e.cuda->cudnn = "9.8.0"; }, {"cuda.cudnn"}},
      {"performance-only property", [](Environment& e) { e.gpu->sm_count = 114; }, {}},
      {"tensoracle version", [](Environment& e) { e.tensoracle_version = "0.2.0"; }, {}},
  };
  for (const Case& c : cases) {
    Environment current = cuda_environment();
    c.change(current);
    const auto found = find_incompatibilities(cuda_environment(), {}, current, {});
    EXPECT_EQ(fields(found), c.expected) << c.name;
    for (const auto& item : found) EXPECT_FALSE(item.reason.empty()) << c.name;
  }
}

TEST(Compatibility, MissingGpuReasonQuotesTheProbe) {
  Environment current = cuda_environment();
  current.gpu.reset();
  current.cuda.reset();
  current.cuda_unavailable_reason = "no CUDA in this build";
  const Status status = check_compatibility("model.engine", cuda_environment(), {}, current, {});
  ASSERT_FALSE(status.is_ok());
  EXPECT_EQ(status.code(), StatusCode::kUnsupported);
  EXPECT_NE(status.message().find("engine 'model.engine' cannot run here"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("NVIDIA H200 (compute capability 9.0)"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("no CUDA in this build"), std::string::npos) << status.message();
}

TEST(Compatibility, PluginsMustBeLoadedWithTheSameVersionAndLibrary) {
  const Environment environment = cuda_environment();
  const std::vector<PluginFingerprint> needed = {{"deform_conv", "2", "aaaa", "", "libdcn.so"}};
  EXPECT_TRUE(find_incompatibilities(environment, needed, environment, needed).empty());
  EXPECT_TRUE(find_incompatibilities(environment, needed, environment, {{"deform_conv", "2", "", "", ""}}).empty())
      << "an unknown library hash does not block";

  auto missing = find_incompatibilities(environment, needed, environment, {{"other", "1", "", "", ""}});
  ASSERT_EQ(fields(missing), std::vector<std::string>{"plugins.deform_conv"});
  EXPECT_NE(missing[0].reason.find("not loaded"), std::string::npos) << missing[0].reason;
  EXPECT_NE(missing[0].reason.find("built with the plugin library 'libdcn.so' (sha256 aaaa)"), std::string::npos)
      << missing[0].reason;

  auto old = find_incompatibilities(environment, needed, environment, {{"deform_conv", "1", "aaaa", "", "libdcn_v1.so"}});
  ASSERT_EQ(fields(old), std::vector<std::string>{"plugins.deform_conv"});
  EXPECT_NE(old[0].reason.find("needs plugin 'deform_conv' version 2, the loaded one is version 1 (from 'libdcn_v1.so')"),
            std::string::npos)
      << old[0].reason;

  auto rebuilt = find_incompatibilities(environment, needed, environment, {{"deform_conv", "2", "bbbb", "", "libdcn.so"}});
  EXPECT_EQ(fields(rebuilt), std::vector<std::string>{"plugins.deform_conv.library_sha256"});
}

TEST(Compatibility, VersionsCompareNumerically) {
  EXPECT_LT(compare_versions("12.9", "12.10"), 0);
  EXPECT_EQ(compare_versions("13.0", "13.0.0"), 0);
  EXPECT_GT(compare_versions("13.1", "13.0.5"), 0);
  EXPECT_LT(compare_versions("", "1"), 0);
}

}  // namespace
}  // namespace tensoracle
