// compile_bundle: what it writes, what it refuses before writing, and that failures leave nothing.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>

#include "bundle/cubin_elf.h"
#include "bundle/tool_search.h"
#include "host/bundle/bundle_test_util.h"
#include "tensoracle/bundle.h"

namespace tensoracle {
namespace {

using namespace tensoracle::testing;

const std::string kElementwise = TENSORACLE_SOURCE_DIR "/examples/bundle_example/kernels/elementwise.cu";

CompileBundleOptions options_for(const ScratchDir& scratch, std::vector<std::string> sources) {
  CompileBundleOptions options;
  options.name = "t";
  options.version = "0.1";
  options.sources = std::move(sources);
  options.architectures = {GpuArch{90}};
  options.out_dir = scratch / "out";
  return options;
}

std::vector<std::string> directory_listing(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(CompileBundle, KernelNamesComeFromTheCubinMangledOrNot) {
  ScratchDir scratch;
  write_bytes(scratch.path() / "mixed.cu",
              "template <typename T> __global__ void fill(T* p) { p[threadIdx.x] = T(1); }\n"
              "template __global__ void fill<float>(float*);\n"
              "extern \"C\" __global__ void plain(float* p) { p[0] = 2.f; }\n"
              "__device__ __noinline__ float helper(float v) { return v * 3.f; }\n"
              "extern \"C\" __global__ void calls(float* p) { p[0] = helper(p[1]); }\n");
  CompileBundleOptions options = options_for(scratch, {scratch / "mixed.cu"});
  options.extra_flags = {"-lineinfo"};
  auto manifest = compile_bundle(options);
  ASSERT_TRUE(manifest.is_ok()) << manifest.status().message();
  ASSERT_EQ(manifest->cubins.size(), 1u);
  EXPECT_EQ(manifest->cubins[0].kernels, (std::vector<std::string>{"_Z4fillIfEvPT_", "calls", "plain"}));
  EXPECT_EQ(manifest->sources[0].kernels, manifest->cubins[0].kernels);
  EXPECT_EQ(manifest->compiler.flags, (std::vector<std::string>{"-cubin", "-lineinfo"}));
  auto on_disk = read_bundle_manifest(options.out_dir);
  ASSERT_TRUE(on_disk.is_ok()) << on_disk.status().message();
  EXPECT_EQ(bundle_manifest_to_json(*on_disk), bundle_manifest_to_json(*manifest));
  EXPECT_TRUE(inspect_bundle(options.out_dir)->passed());
  // Only the bundle is left beside it: the temporary directory was renamed into place.
  EXPECT_EQ(directory_listing(scratch.path()), (std::vector<std::string>{"mixed.cu", "out"}));
}

TEST(CompileBundle, SeveralSourcesAndArchitecturesInParallel) {
  ScratchDir scratch;
  CompileBundleOptions options =
      options_for(scratch, {kElementwise, TENSORACLE_SOURCE_DIR "/examples/bundle_example/kernels/binary.cu"});
  options.architectures = {GpuArch{80}, GpuArch{90}};
  options.jobs = 2;
  auto manifest = compile_bundle(options);
  ASSERT_TRUE(manifest.is_ok()) << manifest.status().message();
  ASSERT_EQ(manifest->cubins.size(), 4u);
  for (const BundleCubin& cubin : manifest->cubins) {
    const std::string bytes = read_bytes(fs::path(options.out_dir) / cubin.path);
    EXPECT_EQ(bundle::read_cubin(bytes.data(), bytes.size())->sm, cubin.arch.sm) << cubin.path;
  }
}

TEST(CompileBundle, UnsupportedArchitectureIsRefusedBeforeWritingAnything) {
  ScratchDir scratch;
  CompileBundleOptions options = options_for(scratch, {kElementwise});
  options.architectures = {GpuArch{90}, GpuArch{50}};
  auto manifest = compile_bundle(options);
  ASSERT_FALSE(manifest.is_ok());
  EXPECT_EQ(manifest.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(manifest.status().message().find("cannot compile for sm_50; it supports: "), std::string::npos)
      << manifest.status().message();
  EXPECT_TRUE(directory_listing(scratch.path()).empty());
}

TEST(CompileBundle, AFailedCompileLeavesNoPartialBundleAndKeepsTheOldOne) {
  ScratchDir scratch;
  CompileBundleOptions good = options_for(scratch, {kElementwise});
  ASSERT_TRUE(compile_bundle(good).is_ok());
  const std::string old_manifest = read_bytes(fs::path(good.out_dir) / "manifest.json");

  write_bytes(scratch.path() / "broken.cu", "extern \"C\" __global__ void k(float* p) { p[0] = undeclared; }\n");
  CompileBundleOptions bad = options_for(scratch, {kElementwise, scratch / "broken.cu"});
  auto manifest = compile_bundle(bad);
  ASSERT_FALSE(manifest.is_ok());
  const std::string message = manifest.status().message();  // status() returns a copy
  EXPECT_NE(message.find("broken.cu' for sm_90 failed"), std::string::npos) << message;
  EXPECT_NE(message.find("undeclared"), std::string::npos) << message;  // nvcc's own diagnostic is quoted
  EXPECT_EQ(read_bytes(fs::path(bad.out_dir) / "manifest.json"), old_manifest);
  EXPECT_EQ(directory_listing(scratch.path()), (std::vector<std::string>{"broken.cu", "out"}));
}

TEST(CompileBundle, ReplacesABundleButNotOtherDirectories) {
  ScratchDir scratch;
  CompileBundleOptions options = options_for(scratch, {kElementwise});
  ASSERT_TRUE(compile_bundle(options).is_ok());
  options.version = "0.2";
  ASSERT_TRUE(compile_bundle(options).is_ok());
  EXPECT_EQ(read_bundle_manifest(options.out_dir)->version, "0.2");

  write_bytes(scratch.path() / "precious/notes.txt", "keep me");
  options.out_dir = scratch / "precious";
  EXPECT_EQ(compile_bundle(options).status().message(),
            "output directory '" + options.out_dir + "' is not empty and not a bundle; refusing to replace it");
}

TEST(CompileBundle, RejectsBadOptions) {
  ScratchDir scratch;
  CompileBundleOptions options = options_for(scratch, {kElementwise, kElementwise});
  EXPECT_EQ(compile_bundle(options).status().message(),
            "two sources are named 'elementwise'; source file names must differ");
  options = options_for(scratch, {scratch / "missing.cu"});
  EXPECT_EQ(compile_bundle(options).status().code(), StatusCode::kNotFound);
  options = options_for(scratch, {kElementwise});
  options.name = "a/b";
  EXPECT_EQ(compile_bundle(options).status().code(), StatusCode::kInvalidArgument);
  options = options_for(scratch, {kElementwise});
  options.architectures = {GpuArch{90}, GpuArch{90}};
  EXPECT_EQ(compile_bundle(options).status().message(), "an architecture is listed twice");
}

// Restores an environment variable at the end of a test.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    const char* old = std::getenv(name);
    if (old != nullptr) old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) setenv(name_, old_->c_str(), 1); else unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(FindNvcc, FollowsTheDocumentedOrder) {
  ScratchDir scratch;
  for (const char* dir : {"override", "home/bin", "path"}) {
    write_bytes(scratch.path() / dir / "nvcc", "#!/bin/sh\n");
    fs::permissions(scratch.path() / dir / "nvcc", fs::perms::owner_all);
  }
  ScopedEnv path("PATH", scratch / "path");
  ScopedEnv home("CUDA_HOME", scratch / "home");
  {
    ScopedEnv override_var("TENSORACLE_NVCC", scratch / "override/nvcc");
    EXPECT_EQ(*find_nvcc(), scratch / "override/nvcc");
    EXPECT_EQ(*find_nvcc(scratch / "path/nvcc"), scratch / "path/nvcc");  // explicit beats everything
  }
  EXPECT_EQ(*find_nvcc(), scratch / "home/bin/nvcc");
  ScopedEnv no_home("CUDA_HOME", "");
  EXPECT_EQ(*find_nvcc(), scratch / "path/nvcc");
}

TEST(FindNvcc, AnExplicitPathThatIsNotThereIsAnErrorNotAFallback) {
  EXPECT_EQ(find_nvcc("/nonexistent/nvcc").status().message(),
            "nvcc '/nonexistent/nvcc' (given explicitly) is not an executable file");
}

TEST(FindNvcc, TheNotFoundErrorListsWhatWasSearched) {
  ScopedEnv path("PATH", "/nonexistent/a:/nonexistent/b");
  ScopedEnv override_var("TENSORACLE_CUOBJDUMP", "");
  std::vector<bundle::ToolCandidate> order = bundle::tool_search_order("cuobjdump", "TENSORACLE_CUOBJDUMP", {});
  // Only the places that cannot hold it on this machine (the .venv and the default may).
  order.erase(std::remove_if(order.begin(), order.end(),
                             [](const bundle::ToolCandidate& c) { return c.path.rfind("/nonexistent/", 0) != 0 && !c.path.empty(); }),
              order.end());
  auto cuobjdump = bundle::first_executable("cuobjdump", order);
  ASSERT_FALSE(cuobjdump.is_ok());
  const std::string message = cuobjdump.status().message();
  EXPECT_NE(message.find("cuobjdump not found; searched, in order:"), std::string::npos) << message;
  EXPECT_NE(message.find("$TENSORACLE_CUOBJDUMP: (not set)"), std::string::npos) << message;
  EXPECT_NE(message.find("$PATH: /nonexistent/a/cuobjdump\n  $PATH: /nonexistent/b/cuobjdump"), std::string::npos) << message;
}

// scripts/setup installs NVIDIA's cuobjdump wheel into the project's .venv; it is found from
// anywhere inside the project, and each place searched is listed once.
TEST(FindCuobjdump, SearchesThePythonEnvironmentAboveTheWorkingDirectory) {
  ScratchDir scratch;
  const fs::path tool = scratch.path() / ".venv/lib/python3.11/site-packages/nvidia/cu13/bin/cuobjdump";
  write_bytes(tool, "#!/bin/sh\n");
  fs::permissions(tool, fs::perms::owner_all);
  fs::create_directories(scratch.path() / "build/deep");
  const fs::path previous = fs::current_path();
  fs::current_path(scratch.path() / "build/deep");
  ScopedEnv path("PATH", "/nonexistent/a");
  ScopedEnv virtual_env("VIRTUAL_ENV", "");
  ScopedEnv override_var("TENSORACLE_CUOBJDUMP", "");
  ScopedEnv home("CUDA_HOME", "");
  ScopedEnv nvcc("TENSORACLE_NVCC", "/nonexistent/nvcc");  // no "beside nvcc" candidate either
  auto found = find_cuobjdump();
  const auto order = bundle::tool_search_order("cuobjdump", "TENSORACLE_CUOBJDUMP", {});
  fs::current_path(previous);
  ASSERT_TRUE(found.is_ok()) << found.status().message();
  EXPECT_EQ(fs::canonical(*found), fs::canonical(tool));
  const auto venv = std::find_if(order.begin(), order.end(), [](const bundle::ToolCandidate& c) {
    return c.origin == ".venv above the working directory";
  });
  ASSERT_NE(venv, order.end());
  EXPECT_EQ(fs::canonical(venv->path), fs::canonical(tool));
}

TEST(FindCuobjdump, ListsEachPlaceOnce) {
  ScopedEnv path("PATH", "/nonexistent/a:/nonexistent/a/:/nonexistent/b:/nonexistent/a");
  ScopedEnv home("CUDA_HOME", "/nonexistent/a");
  ScopedEnv cuda_path("CUDA_PATH", "/usr/local/cuda");
  const auto order = bundle::tool_search_order("cuobjdump", "TENSORACLE_CUOBJDUMP", {});
  std::vector<std::string> paths;
  for (const bundle::ToolCandidate& candidate : order)
    if (!candidate.path.empty()) paths.push_back(fs::path(candidate.path).lexically_normal().string());
  std::vector<std::string> unique = paths;
  std::sort(unique.begin(), unique.end());
  EXPECT_EQ(std::unique(unique.begin(), unique.end()), unique.end()) << "a path is listed twice";
  ASSERT_GE(order.size(), 3u);
  EXPECT_EQ(order[1].origin, "$CUDA_HOME/bin");
  EXPECT_EQ(order[1].path, "/nonexistent/a/bin/cuobjdump");
  EXPECT_EQ(order[2].origin, "$CUDA_PATH/bin");
  EXPECT_NE(std::find(paths.begin(), paths.end(), "/nonexistent/a/cuobjdump"), paths.end());
  EXPECT_NE(std::find(paths.begin(), paths.end(), "/nonexistent/b/cuobjdump"), paths.end());
  EXPECT_EQ(std::count_if(order.begin(), order.end(), [](const bundle::ToolCandidate& c) { return c.origin == "default"; }), 0)
      << "the default /usr/local/cuda/bin was named first by $CUDA_PATH";
}

}  // namespace
}  // namespace tensoracle
