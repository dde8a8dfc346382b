// ArrayReadOptions (npy.h): which arrays are read, the caller's check of each declared shape, and
// the byte limit, all before any array data is allocated or decompressed; zip bombs are refused
// in milliseconds.
#include <gtest/gtest.h>

#include <filesystem>

#include "io/npy_format.h"
#include "io_test_support.h"
#include "npz_bomb.h"
#include "tensoracle/npy.h"
#include "tensoracle/safetensors.h"

namespace tensoracle {
namespace {

using testing::TempDir;

// The npy bytes of a small float array 0, 1, 2, ...
std::string npy_bytes(const Dims& shape) {
  HostArray array = HostArray::zeros(DataType::kFloat32, shape).value();
  for (int64_t i = 0; i < array.element_count(); ++i) array.data_as<float>()[i] = static_cast<float>(i);
  return format_npy_header(DataType::kFloat32, shape) +
         std::string(static_cast<const char*>(array.data()), array.byte_size());
}

const Dims kFourGiB{1023, 1024, 1024};  // fp32: 4 GiB less 4 MiB, under the zip's 32-bit sizes

TEST(ArrayReadLimits, ASmallBombIsAValidArchiveOfZeros) {
  // The builder's stream is genuine: what the big bomb would really inflate to.
  TempDir dir;
  ASSERT_TRUE(testing::write_npz_bomb(dir.file("small.npz"), "probs", DataType::kFloat32, {4, 1024, 256}));
  auto arrays = read_npz(dir.file("small.npz"));
  ASSERT_TRUE(arrays.is_ok()) << arrays.status().to_string();
  const HostArray& probs = arrays->at("probs");
  EXPECT_EQ(probs.shape(), Dims({4, 1024, 256}));
  for (int64_t i = 0; i < probs.element_count(); i += 4099) ASSERT_EQ(probs.data_as<float>()[i], 0.0f) << i;
}

TEST(ArrayReadLimits, AnNpzThatInflatesToGigabytesIsRefusedBeforeAnythingIsAllocated) {
  TempDir dir;
  const std::string path = dir.file("bomb.npz");
  ASSERT_TRUE(testing::write_npz_bomb(path, "probs", DataType::kFloat32, kFourGiB));
  ASSERT_LT(std::filesystem::file_size(path), uint64_t{8} << 20) << "a few MB that inflate to 4 GiB";
  auto refused = read_named_arrays(path);
  ASSERT_EQ(refused.status().code(), StatusCode::kInvalidArgument) << refused.status().to_string();
  const std::string message = refused.status().message();
  EXPECT_NE(message.find("array 'probs' (fp32 [1023,1024,1024], 4.0 GiB) brings the data read to 4.0 GiB, over the "
                         "default limit, the larger of 1.0 GiB and 8x the file's"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("nothing was allocated for it"), std::string::npos) << message;

  ArrayReadOptions options;
  options.max_total_bytes = uint64_t{1} << 20;
  ASSERT_TRUE(testing::write_npz_bomb(dir.file("two.npz"), "probs", DataType::kFloat32, {1, 1024, 512}));
  EXPECT_NE(read_npz(dir.file("two.npz"), options).status().message().find("over the limit given (1.0 MiB)"),
            std::string::npos);
}

TEST(ArrayReadLimits, TheCallersCheckSeesTheDeclaredDtypeAndShapeFirst) {
  TempDir dir;
  const std::string path = dir.file("bomb.npz");
  ASSERT_TRUE(testing::write_npz_bomb(path, "image", DataType::kFloat32, kFourGiB));
  std::vector<std::string> seen;
  ArrayReadOptions options;
  options.max_total_bytes = UINT64_MAX;  // only the check stands between the bomb and the memory
  options.check = [&](const std::string& name, DataType dtype, const Dims& shape) -> Status {
    seen.push_back(name + " " + std::string(data_type_name(dtype)) + " " + shape.to_string());
    return Status(StatusCode::kInvalidArgument, "too big for the engine");
  };
  auto refused = read_named_arrays(path, options);
  EXPECT_EQ(refused.status().message(), "'" + path + "': too big for the engine");
  EXPECT_EQ(seen, std::vector<std::string>{"image fp32 [1023,1024,1024]"});
}

TEST(ArrayReadLimits, ArraysNotSelectedAreSkippedUnread) {
  TempDir dir;
  const std::string path = dir.file("fixture.npz");
  ASSERT_TRUE(testing::write_npz_bomb(path, "probs", DataType::kFloat32, kFourGiB, {{"image", npy_bytes({2, 3})}}));
  ArrayReadOptions only_image;
  only_image.only = std::set<std::string>{"image"};
  ArrayReadOptions without_probs;
  without_probs.exclude = {"probs"};
  for (const ArrayReadOptions* options : {&only_image, &without_probs}) {
    auto arrays = read_named_arrays(path, *options);
    ASSERT_TRUE(arrays.is_ok()) << arrays.status().to_string();
    ASSERT_EQ(arrays->size(), 1u);
    EXPECT_EQ(arrays->at("image").data_as<float>()[5], 5.0f);
  }
  ArrayReadOptions missing;
  missing.only = std::set<std::string>{"image", "logits"};
  EXPECT_EQ(read_named_arrays(path, missing).status().message(),
            "'" + path + "' has no array 'logits' (it holds: image, probs)");
}

TEST(ArrayReadLimits, SafetensorsAndNpyFilesTakeTheSameOptions) {
  TempDir dir;
  HostArray a = HostArray::zeros(DataType::kFloat32, {4}).value();
  HostArray b = HostArray::zeros(DataType::kInt8, {3}).value();
  ASSERT_TRUE(write_safetensors(dir.file("w.safetensors"), {{"a", a.view()}, {"b", b.view()}}).is_ok());
  ArrayReadOptions options;
  options.only = std::set<std::string>{"b"};
  auto selected = read_named_arrays(dir.file("w.safetensors"), options);
  ASSERT_TRUE(selected.is_ok()) << selected.status().to_string();
  EXPECT_EQ(selected->size(), 1u);
  EXPECT_EQ(selected->count("b"), 1u);
  options.only.reset();
  options.max_total_bytes = 18;
  const std::string over = read_named_arrays(dir.file("w.safetensors"), options).status().message();
  EXPECT_NE(over.find("array 'b' (int8 [3], 3 B) brings the data read to 19 B, over the limit given (18 B)"),
            std::string::npos)
      << over;

  ASSERT_TRUE(write_npy(dir.file("probs.npy"), a.view()).is_ok());
  options.max_total_bytes.reset();
  options.check = [](const std::string& name, DataType, const Dims&) {
    return Status(StatusCode::kInvalidArgument, "saw " + name);
  };
  EXPECT_EQ(read_named_arrays(dir.file("probs.npy"), options).status().message(),
            "'" + dir.file("probs.npy") + "': saw probs");
  options.check = nullptr;
  options.only = std::set<std::string>{"logits"};
  EXPECT_EQ(read_named_arrays(dir.file("probs.npy"), options).status().message(),
            "'" + dir.file("probs.npy") + "' has no array 'logits' (it holds: probs)");
}

// An entry whose stream inflates to more than its declared size is an error, after at most the
// declared size was allocated.
TEST(ArrayReadLimits, AStreamLongerThanItsDeclaredSizeIsCaught) {
  TempDir dir;
  z_stream stream{};
  deflateInit2(&stream, 9, Z_DEFLATED, -15, 9, Z_DEFAULT_STRATEGY);
  const std::string header = format_npy_header(DataType::kFloat32, {256});
  const std::string head = testing::npz_bomb_detail::deflate_piece(stream, header, Z_FULL_FLUSH);
  const std::string body = testing::npz_bomb_detail::deflate_piece(stream, std::string(8192, '\0'), Z_FINISH);
  deflateEnd(&stream);
  std::string whole = header + std::string(8192, '\0');
  const auto crc = static_cast<uint32_t>(crc32(0L, reinterpret_cast<const Bytef*>(whole.data()), whole.size()));
  testing::ZipEntry entry{"x.npy", 8, crc, head.size() + body.size(), header.size() + 1024, {&head, &body}};
  ASSERT_TRUE(testing::write_zip_entries(dir.file("lying.npz"), {entry}));
  auto lying = read_npz(dir.file("lying.npz"));
  ASSERT_FALSE(lying.is_ok());
  EXPECT_EQ(lying.status().code(), StatusCode::kCorruptData) << lying.status().to_string();
}

TEST(ArrayReadLimits, ADuplicateEntryIsNamed) {
  TempDir dir;
  const std::string bytes = npy_bytes({2});
  const auto crc = static_cast<uint32_t>(crc32(0L, reinterpret_cast<const Bytef*>(bytes.data()), bytes.size()));
  const testing::ZipEntry entry{"a.npy", 0, crc, bytes.size(), bytes.size(), {&bytes}};
  ASSERT_TRUE(testing::write_zip_entries(dir.file("twice.npz"), {entry, entry}));
  EXPECT_EQ(read_npz(dir.file("twice.npz")).status().message(),
            "'" + dir.file("twice.npz") + "': the array 'a' appears twice");
}

}  // namespace
}  // namespace tensoracle
