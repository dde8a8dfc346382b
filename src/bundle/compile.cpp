// compile_bundle: nvcc → one cubin per (source, architecture) → manifest.json, atomically.
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "bundle/cubin_elf.h"
#include "bundle/process.h"
#include "core/errors.h"
#include "io/atomic_file.h"
#include "tensoracle/bundle.h"
#include "tensoracle/hashing.h"

namespace tensoracle {
namespace {

namespace fs = std::filesystem;
using bundle::ProcessResult;
using bundle::run_process;

constexpr size_t kMaxQuotedOutput = 4000;  // bytes of compiler output quoted in an error

std::string tail(const std::string& text) {
  return text.size() <= kMaxQuotedOutput ? text : "..." + text.substr(text.size() - kMaxQuotedOutput);
}

bool is_plain_name(const std::string& text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
  });
}

Result<std::string> read_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return not_found("cannot open '{}'", path);
  std::ostringstream text;
  text << file.rdbuf();
  if (file.bad()) return io_error("cannot read '{}'", path);
  return text.str();
}

Status check_options(const CompileBundleOptions& options) {
  if (!is_plain_name(options.name)) {
    return invalid_argument("bundle name '{}' must use only letters, digits, '_', '.', '-'", options.name);
  }
  if (!is_plain_name(options.version)) {
    return invalid_argument("bundle version '{}' must use only letters, digits, '_', '.', '-'", options.version);
  }
  if (options.sources.empty()) return invalid_argument("no kernel sources given");
  if (options.architectures.empty()) return invalid_argument("no GPU architectures given");
  if (options.out_dir.empty()) return invalid_argument("no output directory given");
  std::set<std::string> stems;
  for (const std::string& source : options.sources) {
    std::error_code error;
    if (!fs::is_regular_file(source, error)) return not_found("kernel source '{}' does not exist", source);
    // Cubins are named after the source's stem, so two sources may not share one.
    if (!stems.insert(fs::path(source).stem().string()).second) {
      return invalid_argument("two sources are named '{}'; source file names must differ",
                              fs::path(source).stem().string());
    }
  }
  std::set<GpuArch> unique(options.architectures.begin(), options.architectures.end());
  if (unique.size() != options.architectures.size()) return invalid_argument("an architecture is listed twice");
  std::error_code error;
  if (fs::exists(options.out_dir, error)) {
    if (!fs::is_directory(options.out_dir, error)) {
      return invalid_argument("output '{}' exists and is not a directory", options.out_dir);
    }
    const bool is_bundle = fs::exists(fs::path(options.out_dir) / kBundleManifestFile, error);
    if (!is_bundle && !fs::is_empty(options.out_dir, error)) {
      return invalid_argument("output directory '{}' is not empty and not a bundle; refusing to replace it",
                              options.out_dir);
    }
  }
  return Status::ok();
}

// "Cuda compilation tools, release 13.0, V13.0.88" (+ the "Build ..." line when present).
Result<std::string> nvcc_version(const std::string& nvcc) {
  TO_ASSIGN_OR_RETURN(ProcessResult result, run_process({nvcc, "--version"}));
  if (result.exit_code != 0) return io_error("'{} --version' failed:\n{}", nvcc, tail(result.output));
  std::istringstream lines(result.output);
  std::string line, version;
  while (std::getline(lines, line)) {
    if (line.rfind("Cuda compilation tools", 0) == 0 || line.rfind("Build ", 0) == 0) {
      version += (version.empty() ? "" : "; ") + line;
    }
  }
  if (version.empty()) return io_error("'{} --version' printed no version line", nvcc);
  return version;
}

// Asks nvcc which real architectures it can compile for, and rejects the rest up front.
Status check_architectures(const std::string& nvcc, const std::vector<GpuArch>& architectures) {
  TO_ASSIGN_OR_RETURN(ProcessResult result, run_process({nvcc, "--list-gpu-code"}));
  if (result.exit_code != 0) return io_error("'{} --list-gpu-code' failed:\n{}", nvcc, tail(result.output));
  std::set<int> supported;
  std::string listed;
  std::istringstream lines(result.output);
  for (std::string line; std::getline(lines, line);) {
    auto arch = parse_gpu_arch(line);
    if (arch.is_ok() && arch->variant == '\0') {
      supported.insert(arch->sm);
      listed += (listed.empty() ? "" : ", ") + line;
    }
  }
  for (const GpuArch& arch : architectures) {
    // nvcc lists base architectures only; an 'a'/'f' variant needs its base to be supported.
    if (supported.count(arch.sm) == 0) {
      return unsupported("nvcc '{}' cannot compile for {}; it supports: {}", nvcc, arch.name(), listed);
    }
  }
  return Status::ok();
}

struct Job {
  std::string source;  // path as given
  std::string source_name;
  GpuArch arch;
  std::string relative_path;  // sm_90/elementwise.cubin
};

// Runs the jobs on `workers` threads; returns the first failure in job order.
Status run_jobs(const std::vector<Job>& jobs, const std::string& nvcc, const std::vector<std::string>& flags,
                const fs::path& root, unsigned workers) {
  std::vector<Status> results(jobs.size());
  std::atomic<size_t> next{0};
  const auto work = [&] {
    for (size_t i = next++; i < jobs.size(); i = next++) {
      const Job& job = jobs[i];
      std::vector<std::string> argv = {nvcc};
      argv.insert(argv.end(), flags.begin(), flags.end());
      argv.push_back("-arch=" + job.arch.name());
      argv.push_back("-o");
      argv.push_back((root / job.relative_path).string());
      argv.push_back(job.source);
      auto result = run_process(argv);
      if (!result.is_ok()) {
        results[i] = result.status();
      } else if (result->exit_code != 0) {
        results[i] = invalid_argument("compiling '{}' for {} failed (nvcc exit code {}):\n{}", job.source,
                                      job.arch.name(), result->exit_code, tail(result->output));
      }
    }
  };
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < workers; ++t) threads.emplace_back(work);
  for (std::thread& thread : threads) thread.join();
  for (const Status& status : results) TO_RETURN_IF_ERROR(status);
  return Status::ok();
}

Result<BundleManifest> build_in(const fs::path& root, const CompileBundleOptions& options, const std::string& nvcc,
                                const std::string& compiler_version) {
  BundleManifest manifest;
  manifest.name = options.name;
  manifest.version = options.version;
  manifest.compiler.version = compiler_version;
  manifest.compiler.flags = {"-cubin"};
  manifest.compiler.flags.insert(manifest.compiler.flags.end(), options.extra_flags.begin(), options.extra_flags.end());

  std::vector<Job> jobs;
  for (const std::string& source : options.sources) {
    TO_ASSIGN_OR_RETURN(std::string text, read_file(source));
    const fs::path path(source);
    manifest.sources.push_back({path.filename().string(), sha256_hex(text), {}});
    for (const GpuArch& arch : options.architectures) {
      jobs.push_back({source, path.filename().string(), arch, arch.name() + "/" + path.stem().string() + ".cubin"});
    }
  }
  for (const GpuArch& arch : options.architectures) {
    std::error_code error;
    fs::create_directory(root / arch.name(), error);
    if (error) return io_error("cannot create '{}': {}", (root / arch.name()).string(), error.message());
  }
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const unsigned workers = std::min<size_t>(options.jobs == 0 ? cores : options.jobs, jobs.size());
  TO_RETURN_IF_ERROR(run_jobs(jobs, nvcc, manifest.compiler.flags, root, workers));

  // Read every cubin back: the manifest records what the files are, not what we asked for.
  std::map<std::string, std::set<std::string>> kernels_by_source;
  for (const Job& job : jobs) {
    TO_ASSIGN_OR_RETURN(std::string bytes, read_file((root / job.relative_path).string()));
    auto info = bundle::read_cubin(bytes.data(), bytes.size());
    if (!info) return info.status().with_context("nvcc output '" + job.relative_path + "'");
    if (info->sm != job.arch.sm) {
      return Status(StatusCode::kInternal, fmt::format("nvcc built '{}' for sm_{} when asked for {}",
                                                       job.relative_path, info->sm, job.arch.name()));
    }
    kernels_by_source[job.source_name].insert(info->kernels.begin(), info->kernels.end());
    manifest.cubins.push_back(
        {job.arch, job.source_name, job.relative_path, sha256_hex(bytes), bytes.size(), info->kernels});
  }
  for (BundleSource& source : manifest.sources) {
    const auto& kernels = kernels_by_source[source.name];
    source.kernels.assign(kernels.begin(), kernels.end());
  }
  const std::string manifest_json = bundle_manifest_to_json(manifest);
  TO_RETURN_IF_ERROR(
      write_file_atomically((root / kBundleManifestFile).string(), manifest_json.data(), manifest_json.size()));
  return manifest;
}

// Moves the finished temporary directory to `out`. An existing bundle at `out` is moved aside
// first and removed after, so `out` is always either the old bundle or the new one.
Status publish(const fs::path& temp, const fs::path& out) {
  std::error_code error;
  fs::path old;
  if (fs::exists(out, error)) {
    old = out.parent_path() / ("." + out.filename().string() + ".old-" + temp.filename().string());
    fs::rename(out, old, error);
    if (error) return io_error("cannot move the old bundle '{}' aside: {}", out.string(), error.message());
  }
  fs::rename(temp, out, error);
  if (error) {
    std::error_code ignored;
    if (!old.empty()) fs::rename(old, out, ignored);
    return io_error("cannot rename '{}' to '{}': {}", temp.string(), out.string(), error.message());
  }
  if (!old.empty()) fs::remove_all(old, error);
  return Status::ok();
}

}  // namespace

Result<BundleManifest> compile_bundle(const CompileBundleOptions& options) {
  TO_RETURN_IF_ERROR(check_options(options));
  TO_ASSIGN_OR_RETURN(const std::string nvcc, find_nvcc(options.nvcc));
  TO_ASSIGN_OR_RETURN(const std::string version, nvcc_version(nvcc));
  TO_RETURN_IF_ERROR(check_architectures(nvcc, options.architectures));

  fs::path out = fs::absolute(options.out_dir).lexically_normal();
  if (out.filename().empty()) out = out.parent_path();  // "dir/" → "dir"
  std::error_code error;
  fs::create_directories(out.parent_path(), error);
  if (error) return io_error("cannot create '{}': {}", out.parent_path().string(), error.message());
  std::string pattern = (out.parent_path() / ("." + out.filename().string() + ".tmp-XXXXXX")).string();
  if (mkdtemp(pattern.data()) == nullptr) return io_error("cannot create a temporary directory beside '{}'", out.string());
  const fs::path temp(pattern);

  auto manifest = build_in(temp, options, nvcc, version);
  Status status = manifest.status();
  if (status.is_ok()) status = publish(temp, out);
  if (!status.is_ok()) {
    fs::remove_all(temp, error);
    return status;
  }
  return manifest;
}

}  // namespace tensoracle
