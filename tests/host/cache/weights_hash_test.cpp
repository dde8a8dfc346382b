// The weights content hash and the sidecar records that spare rehashing unchanged checkpoints.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "host/cache/cache_testing.h"
#include "tensoracle/cache.h"
#include "tensoracle/hashing.h"
#include "tensoracle/safetensors.h"

namespace tensoracle {
namespace {

using testing::TempDir;

struct Checkpoint {
  std::vector<float> a = {1, 2, 3, 4, 5, 6};
  std::vector<float> b = {7, 8};
  std::vector<float> unused = {9, 10, 11};
  Dims a_shape{2, 3};
};

void write_checkpoint(const std::string& path, const Checkpoint& c) {
  NamedArrayViews views;
  views["a"] = ArrayView{DataType::kFloat32, c.a_shape, c.a.data()};
  views["b"] = ArrayView{DataType::kFloat32, Dims{2}, c.b.data()};
  views["unused"] = ArrayView{DataType::kFloat32, Dims{3}, c.unused.data()};
  ASSERT_TRUE(write_safetensors(path, views).is_ok());
}

// Moves the modification time a minute into the past, out of the "racy" window.
void age(const std::string& path, int seconds_ago = 60) {
  struct stat info {};
  ASSERT_EQ(::stat(path.c_str(), &info), 0);
  const timespec times[2] = {{info.st_mtim.tv_sec - seconds_ago, 0}, {info.st_mtim.tv_sec - seconds_ago, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
}

std::string hash_of(const std::string& path, const std::vector<std::string>& names, FileHashCache* sidecar = nullptr) {
  auto weights = Weights::open(path);
  EXPECT_TRUE(weights.is_ok()) << weights.status().to_string();
  auto hash = weights_content_hash(*weights, names, sidecar);
  EXPECT_TRUE(hash.is_ok()) << hash.status().to_string();
  return hash.is_ok() ? *hash : "";
}

TEST(WeightsContentHash, DependsOnlyOnTheNamedTensors) {
  TempDir dir;
  const std::string path = dir / "w.safetensors";
  const std::vector<std::string> used = {"b", "a"};
  write_checkpoint(path, Checkpoint{});
  const std::string base = hash_of(path, used);
  EXPECT_EQ(base.size(), 64u);
  EXPECT_EQ(hash_of(path, {"a", "b", "a"}), base) << "order and duplicates do not matter";

  Checkpoint changed_unused;
  changed_unused.unused[0] = -1;
  write_checkpoint(path, changed_unused);
  EXPECT_EQ(hash_of(path, used), base);

  Checkpoint changed_value;
  changed_value.a[5] = 6.5f;
  write_checkpoint(path, changed_value);
  EXPECT_NE(hash_of(path, used), base);

  Checkpoint reshaped;  // same bytes, other shape
  reshaped.a_shape = Dims{3, 2};
  write_checkpoint(path, reshaped);
  EXPECT_NE(hash_of(path, used), base);

  write_checkpoint(path, Checkpoint{});
  EXPECT_NE(hash_of(path, {"a"}), base);
  EXPECT_NE(hash_of(path, {"a", "b", "unused"}), base);
}

TEST(WeightsContentHash, MissingTensorIsNamed) {
  TempDir dir;
  const std::string path = dir / "w.safetensors";
  write_checkpoint(path, Checkpoint{});
  auto weights = Weights::open(path);
  auto hash = weights_content_hash(*weights, {"a", "conv9.weight"});
  ASSERT_FALSE(hash.is_ok());
  EXPECT_NE(hash.status().message().find("conv9.weight"), std::string::npos) << hash.status().message();
}

TEST(FileHashCache, SidecarGivesTheSameHashAndSkipsUnchangedFiles) {
  TempDir dir;
  const std::string path = dir / "w.safetensors";
  write_checkpoint(path, Checkpoint{});
  age(path);
  const std::string direct = hash_of(path, {"a", "b"});
  FileHashCache sidecar(dir / "records");
  EXPECT_EQ(hash_of(path, {"a", "b"}, &sidecar), direct);
  EXPECT_EQ(sidecar.misses(), 1);
  EXPECT_EQ(hash_of(path, {"a", "b"}, &sidecar), direct);
  EXPECT_EQ(sidecar.hits(), 1);
  EXPECT_EQ(sidecar.misses(), 1);

  auto whole = sidecar.file_sha256(path);
  ASSERT_TRUE(whole.is_ok());
  EXPECT_EQ(*sidecar.file_sha256(path), *whole);
  EXPECT_EQ(*whole, *sha256_file_hex(path));
  EXPECT_EQ(sidecar.hits(), 2);
}

// Each change of the file's identity invalidates its record; the new content is hashed.
TEST(FileHashCache, AnyChangeOfIdentityInvalidatesTheRecord) {
  struct Case {
    const char* name;
    std::function<void(const std::string& path, const std::string& dir)> change;
  };
  const Case cases[] = {
      {"same size, mtime restored (ctime changes)",
       [](const std::string& path, const std::string&) {
         struct stat before {};
         ::stat(path.c_str(), &before);
         Checkpoint c;
         c.a[0] = 100;
         write_checkpoint(path, c);  // atomic replace: also a new inode
         const timespec times[2] = {before.st_mtim, before.st_mtim};
         ::utimensat(AT_FDCWD, path.c_str(), times, 0);
       }},
      {"in-place overwrite, same size",
       [](const std::string& path, const std::string&) {
         const int fd = ::open(path.c_str(), O_WRONLY);
         struct stat info {};
         ::fstat(fd, &info);
         const float value = 100;
         (void)!::pwrite(fd, &value, sizeof value, info.st_size - 4 * 11);  // inside tensor "a"
         ::close(fd);
         age(path, 30);
       }},
      {"size", [](const std::string& path, const std::string&) {
         Checkpoint c;
         c.a.push_back(0);
         c.a_shape = Dims{7};
         write_checkpoint(path, c);
         age(path);
       }},
      {"inode (replaced by a copy with the same times)",
       [](const std::string& path, const std::string& dir) {
         struct stat before {};
         ::stat(path.c_str(), &before);
         Checkpoint c;
         c.a[1] = 100;
         write_checkpoint(dir + "/copy.safetensors", c);
         const timespec times[2] = {before.st_mtim, before.st_mtim};
         ::utimensat(AT_FDCWD, (dir + "/copy.safetensors").c_str(), times, 0);
         ::rename((dir + "/copy.safetensors").c_str(), path.c_str());
       }},
  };
  for (const Case& c : cases) {
    TempDir dir;
    const std::string path = dir / "w.safetensors";
    write_checkpoint(path, Checkpoint{});
    age(path);
    FileHashCache sidecar(dir / "records");
    const std::string before = hash_of(path, {"a"}, &sidecar);
    c.change(path, dir.path());
    const std::string expected = hash_of(path, {"a"});
    const std::string after = hash_of(path, {"a"}, &sidecar);
    EXPECT_EQ(after, expected) << c.name;
    EXPECT_NE(after, before) << c.name;
    EXPECT_EQ(sidecar.misses(), 2) << c.name;
    EXPECT_EQ(sidecar.hits(), 0) << c.name;
  }
}

TEST(FileHashCache, FreshlyModifiedFilesAreNotRecorded) {
  TempDir dir;
  const std::string path = dir / "w.safetensors";
  write_checkpoint(path, Checkpoint{});  // modified just now
  FileHashCache sidecar(dir / "records");
  (void)hash_of(path, {"a"}, &sidecar);
  (void)hash_of(path, {"a"}, &sidecar);
  EXPECT_EQ(sidecar.misses(), 2);
  EXPECT_EQ(sidecar.hits(), 0);
}

TEST(FileHashCache, UnwritableRecordDirectoryStillHashes) {
  TempDir dir;
  const std::string path = dir / "w.safetensors";
  write_checkpoint(path, Checkpoint{});
  age(path);
  std::ofstream(dir / "file") << "x";
  FileHashCache sidecar(dir / "file/records");
  EXPECT_EQ(hash_of(path, {"a"}, &sidecar), hash_of(path, {"a"}));
}

}  // namespace
}  // namespace tensoracle
