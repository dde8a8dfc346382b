// The registry is the one list of backends: the reference first, every entry creatable without
// its device, named as the registry names it, and probed into an environment of that name.
#include <gtest/gtest.h>

#include <set>

#include "backends/registry.h"
#include "tensoracle/environment.h"

namespace tensoracle::backends {
namespace {

TEST(BackendRegistry, ListsTheReferenceFirstAndEachBackendOnce) {
  const std::vector<BackendInfo>& registry = backend_registry();
  ASSERT_FALSE(registry.empty());
  EXPECT_EQ(registry.front().name, kReferenceBackend);
  std::set<std::string> seen;
  for (const BackendInfo& info : registry) {
    EXPECT_TRUE(seen.insert(info.name).second) << "listed twice: " << info.name;
    EXPECT_NE(std::string(info.description), "") << info.name << " has no description";
    EXPECT_NE(info.create, nullptr) << info.name;
  }
  const std::vector<std::string> names = backend_names();
  ASSERT_EQ(names.size(), registry.size());
  for (size_t i = 0; i < names.size(); ++i) EXPECT_EQ(names[i], registry[i].name);
}

// Creating a backend needs no device, so --help, probing and error messages work anywhere; a
// backend that cannot run here says why through usable().
TEST(BackendRegistry, CreatesEveryBackendWithoutItsDevice) {
  for (const BackendInfo& info : backend_registry()) {
    auto backend = create_backend(info.name);
    ASSERT_TRUE(backend.is_ok()) << info.name << ": " << backend.status().to_string();
    EXPECT_EQ((*backend)->name(), info.name);
    const Status usable = (*backend)->usable();
    if (!usable.is_ok()) {
      EXPECT_EQ(usable.code(), StatusCode::kFailedPrecondition) << info.name << ": " << usable.to_string();
      EXPECT_FALSE(usable.message().empty());
    }
  }
  auto reference = create_backend(kReferenceBackend);
  ASSERT_TRUE(reference.is_ok());
  EXPECT_TRUE((*reference)->usable().is_ok()) << "the reference runs everywhere";
}

TEST(BackendRegistry, AnUnknownNameIsRefusedNamingTheBackendsOfThisBuild) {
  auto missing = create_backend("tpu");
  ASSERT_FALSE(missing.is_ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("'tpu'"), std::string::npos) << missing.status().message();
  for (const std::string& name : backend_names())
    EXPECT_NE(missing.status().message().find(name), std::string::npos) << missing.status().message();
}

TEST(BackendRegistry, ProbingFillsTheEnvironmentOfEachBackend) {
  for (const BackendInfo& info : backend_registry()) {
    auto environment = probe_environment(info.name);
    ASSERT_TRUE(environment.is_ok()) << info.name << ": " << environment.status().to_string();
    EXPECT_EQ(environment->backend, info.name);
    EXPECT_FALSE(environment->tensoracle_version.empty());
    EXPECT_FALSE(environment->os.empty());
    // A backend without a GPU here (or that never uses one) says why the GPU fields are empty.
    if (!environment->gpu) EXPECT_FALSE(environment->cuda_unavailable_reason.empty()) << info.name;
  }
}

}  // namespace
}  // namespace tensoracle::backends
