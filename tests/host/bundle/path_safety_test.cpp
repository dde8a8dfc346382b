// The path rule for everything inside a bundle or wheel.
#include "plugin/bundle_path_safety.h"

#include <gtest/gtest.h>

namespace tensoracle::bundle {
namespace {

TEST(PathSafety, AcceptsPlainRelativePaths) {
  for (const char* path : {"manifest.json", "sm_90/elementwise.cubin", "pkg/bundle/sm_90/a.cubin", "./a.cubin"}) {
    EXPECT_EQ(unsafe_path_reason(path), std::nullopt) << path;
  }
  EXPECT_EQ(unsafe_path_reason("pkg/bundle/", /*allow_trailing_slash=*/true), std::nullopt);
}

TEST(PathSafety, RejectsEveryWayOut) {
  const std::pair<const char*, const char*> cases[] = {
      {"", "empty path"},
      {"/etc/passwd", "absolute path"},
      {"../outside.cubin", "'..' component"},
      {"sm_90/../../outside.cubin", "'..' component"},
      {"sm_90/..", "'..' component"},
      {"C:/Windows/x.cubin", "starts with a drive letter"},
      {"c:x.cubin", "starts with a drive letter"},
      {"sm_90\\..\\..\\x.cubin", "contains a backslash"},
      {"sm_90//x.cubin", "empty path component"},
      {"pkg/bundle/", "empty path component"},  // directories only where allowed
  };
  for (const auto& [path, reason] : cases) {
    EXPECT_EQ(unsafe_path_reason(path), std::optional<std::string>(reason)) << path;
  }
  EXPECT_EQ(unsafe_path_reason(std::string_view("a\0b", 3)), std::optional<std::string>("contains a NUL character"));
}

}  // namespace
}  // namespace tensoracle::bundle
