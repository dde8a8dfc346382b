// inspect_wheel: bundles inside a wheel, read in place; zip-slip and corrupt archives.
#include <sys/stat.h>
#include <zip.h>

#include <gtest/gtest.h>

#include "host/bundle/bundle_test_util.h"
#include "tensoracle/bundle.h"

namespace tensoracle {
namespace {

using namespace tensoracle::testing;
namespace checks = bundle_checks;
using Names = std::vector<std::string>;

struct ZipEntry {
  std::string name;
  std::string bytes;
  bool symlink = false;
};

// Writes a zip with libzip, entries stored uncompressed (so tests can find and damage their bytes).
void write_zip(const fs::path& path, const std::vector<ZipEntry>& entries) {
  int error = 0;
  zip_t* archive = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &error);
  ASSERT_NE(archive, nullptr);
  for (const ZipEntry& entry : entries) {
    zip_source_t* source = zip_source_buffer(archive, entry.bytes.data(), entry.bytes.size(), 0);
    const zip_int64_t index = zip_file_add(archive, entry.name.c_str(), source, ZIP_FL_ENC_UTF_8);
    ASSERT_GE(index, 0) << zip_strerror(archive);
    zip_set_file_compression(archive, static_cast<zip_uint64_t>(index), ZIP_CM_STORE, 0);
    if (entry.symlink) {
      zip_file_set_external_attributes(archive, static_cast<zip_uint64_t>(index), 0, ZIP_OPSYS_UNIX,
                                       static_cast<zip_uint32_t>(S_IFLNK | 0777) << 16);
    }
  }
  ASSERT_EQ(zip_close(archive), 0);
}

// The example bundle's files under `prefix`, plus what a wheel usually carries.
std::vector<ZipEntry> wheel_entries(const std::string& prefix) {
  std::vector<ZipEntry> entries = {{"example_pkg/__init__.py", ""},
                                   {"example_pkg-1.0.dist-info/METADATA", "Name: example_pkg\n"}};
  for (const auto& file : fs::recursive_directory_iterator(example_bundle())) {
    if (!file.is_regular_file()) continue;
    entries.push_back({prefix + fs::relative(file.path(), example_bundle()).generic_string(), read_bytes(file.path())});
  }
  return entries;
}

InspectReport inspect(const fs::path& wheel, const InspectOptions& options = {}) {
  auto report = inspect_wheel(wheel.string(), options);
  EXPECT_TRUE(report.is_ok()) << report.status().message();
  return report.is_ok() ? *report : InspectReport{};
}

TEST(InspectWheel, ChecksTheBundleInsideInPlace) {
  ScratchDir scratch;
  write_zip(scratch.path() / "w.whl", wheel_entries("example_pkg/cubins/"));
  const InspectReport report = inspect(scratch.path() / "w.whl");
  EXPECT_TRUE(report.passed()) << inspect_report_to_text(report);
  EXPECT_EQ(checks_named(report, checks::kCubinSha256).size(), 4u);
  EXPECT_EQ(checks_named(report, checks::kCubinArch, "sm_90/binary.cubin").at(0).subject,
            "example_pkg/cubins/sm_90/binary.cubin");
}

TEST(InspectWheel, ChecksEveryBundleAndThePluginInEach) {
  ScratchDir scratch;
  auto entries = wheel_entries("a/");
  for (auto& entry : wheel_entries("b/deeper/")) {
    if (entry.name.rfind("b/", 0) == 0) entries.push_back(entry);
  }
  write_zip(scratch.path() / "w.whl", entries);
  InspectOptions options;
  options.plugin = *read_plugin_declaration(TENSORACLE_SOURCE_DIR "/examples/bundle_example/plugin.json");
  options.plugin->bundle.architectures = {GpuArch{90}};
  const InspectReport report = inspect(scratch.path() / "w.whl", options);
  EXPECT_TRUE(report.passed()) << inspect_report_to_text(report);
  EXPECT_EQ(checks_named(report, checks::kManifestSchema).size(), 2u);
  EXPECT_EQ(checks_named(report, checks::kPluginKernels).size(), 4u);
  EXPECT_EQ(checks_named(report, checks::kWheelBundles).at(0).reason, "2 bundle(s)");
}

TEST(InspectWheel, ZipSlipEntries) {
  ScratchDir scratch;
  auto entries = wheel_entries("pkg/");
  entries.push_back({"../../.bashrc", "echo owned\n"});
  entries.push_back({"/etc/cron.d/x", ""});
  entries.push_back({"pkg/link", "/etc/passwd", /*symlink=*/true});
  write_zip(scratch.path() / "w.whl", entries);
  const InspectReport report = inspect(scratch.path() / "w.whl");
  EXPECT_EQ(failed_check_names(report),
            (Names{"wheel_entry_path(../../.bashrc)", "wheel_entry_path(/etc/cron.d/x)", "wheel_entry_path(pkg/link)"}));
  EXPECT_EQ(checks_named(report, checks::kWheelEntryPath, "pkg/link").at(0).reason,
            "a symlink entry (an installer could write through it)");
}

// libzip itself calls such an archive inconsistent ("File already exists"); the report names the
// entry instead, as the check is documented.
TEST(InspectWheel, AnEntryThatAppearsTwiceIsNamed) {
  ScratchDir scratch;
  auto entries = wheel_entries("pkg/");
  entries.push_back({"pkg/evil.py", "print('first')\n"});
  entries.push_back({"pkg/EVIL.py", "print('second')\n"});
  write_zip(scratch.path() / "w.whl", entries);
  // Entry names are stored as they are: make the second name the first's, in both places.
  std::string bytes = read_bytes(scratch.path() / "w.whl");
  for (size_t at = bytes.find("pkg/EVIL.py"); at != std::string::npos; at = bytes.find("pkg/EVIL.py", at))
    bytes.replace(at, 11, "pkg/evil.py");
  write_bytes(scratch.path() / "w.whl", bytes);
  const InspectReport report = inspect(scratch.path() / "w.whl");
  EXPECT_EQ(failed_check_names(report), (Names{"wheel_entry_path(pkg/evil.py)"})) << inspect_report_to_text(report);
  EXPECT_EQ(checks_named(report, checks::kWheelEntryPath, "pkg/evil.py").at(0).reason, "appears twice in the archive");
}

TEST(InspectWheel, DamagedCubinInsideTheWheel) {
  ScratchDir scratch;
  auto entries = wheel_entries("pkg/");
  for (auto& entry : entries) {
    if (entry.name == "pkg/sm_90/elementwise.cubin") entry.bytes = read_bytes(example_bundle() / "sm_86/elementwise.cubin");
  }
  write_zip(scratch.path() / "w.whl", entries);
  const auto failed = failed_check_names(inspect(scratch.path() / "w.whl"));
  EXPECT_NE(std::find(failed.begin(), failed.end(), "cubin_sha256(pkg/sm_90/elementwise.cubin)"), failed.end());
  EXPECT_NE(std::find(failed.begin(), failed.end(), "cubin_arch(pkg/sm_90/elementwise.cubin)"), failed.end());
}

TEST(InspectWheel, CorruptZip) {
  ScratchDir scratch;
  write_zip(scratch.path() / "w.whl", wheel_entries("pkg/"));
  const std::string bytes = read_bytes(scratch.path() / "w.whl");
  write_bytes(scratch.path() / "truncated.whl", bytes.substr(0, bytes.size() - 100));
  write_bytes(scratch.path() / "garbage.whl", "this is not a zip archive");
  for (const char* name : {"truncated.whl", "garbage.whl"}) {
    const InspectReport report = inspect(scratch.path() / name);
    EXPECT_EQ(failed_check_names(report), Names{"wheel_archive(" + (scratch.path() / name).string() + ")"});
  }
}

TEST(InspectWheel, CorruptEntryDataFailsItsCrc) {
  ScratchDir scratch;
  write_zip(scratch.path() / "w.whl", wheel_entries("pkg/"));
  std::string bytes = read_bytes(scratch.path() / "w.whl");
  const std::string cubin = read_bytes(example_bundle() / "sm_86/binary.cubin");
  const size_t at = bytes.find(cubin);  // stored uncompressed
  ASSERT_NE(at, std::string::npos);
  bytes[at + cubin.size() / 2] ^= 0x55;
  write_bytes(scratch.path() / "w.whl", bytes);
  const auto present = checks_named(inspect(scratch.path() / "w.whl"), checks::kCubinPresent, "sm_86/binary.cubin");
  ASSERT_EQ(present.size(), 1u);
  EXPECT_FALSE(present[0].passed);
  EXPECT_NE(present[0].reason.find("CRC"), std::string::npos) << present[0].reason;
}

TEST(InspectWheel, AWheelWithoutBundles) {
  ScratchDir scratch;
  write_zip(scratch.path() / "w.whl", {{"pkg/__init__.py", ""}});
  EXPECT_EQ(failed_check_names(inspect(scratch.path() / "w.whl")),
            Names{"wheel_bundles(" + (scratch.path() / "w.whl").string() + ")"});
}

TEST(InspectWheel, AMissingFileIsAnErrorNotAReport) {
  EXPECT_EQ(inspect_wheel("/nonexistent/w.whl").status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace tensoracle
