// The engine file container: what is written is read back exactly, zero-copy and aligned; every
// corruption of the bytes is detected and explained.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "engine/engine_layout.h"
#include "host/engine/sample_engine.h"
#include "tensoracle/engine_file.h"

namespace tensoracle {
namespace {

using testing::sample_engine_bytes;
using testing::sample_engine_writer;
using testing::sample_io_table;

std::filesystem::path temp_dir() {
  char pattern[] = "/tmp/tensoracle-engine-test-XXXXXX";
  const char* made = ::mkdtemp(pattern);
  EXPECT_NE(made, nullptr);
  return made;
}

TEST(EngineFile, RoundTripsEverySection) {
  const std::string bytes = sample_engine_bytes(R"({"engine_name": "sample"})", 1000);
  auto engine = EngineFile::from_bytes(bytes.data(), bytes.size(), "sample.engine");
  ASSERT_TRUE(engine.is_ok()) << engine.status().to_string();
  EXPECT_EQ(engine->format_version(), kEngineFormatVersion);
  EXPECT_EQ(engine->manifest_json(), R"({"engine_name": "sample"})");
  EXPECT_EQ(engine->environment(), testing::sample_environment());
  ASSERT_EQ(engine->required_plugins().size(), 1u);
  EXPECT_EQ(engine->required_plugins()[0].name, "deform_conv");
  EXPECT_EQ(engine->io_table(), sample_io_table());
  EXPECT_EQ(engine->plan().as_string_view(), "plan: conv -> relu -> fc");
  ASSERT_EQ(engine->blobs().size(), 2u);
  auto conv = engine->blob("conv.weight");
  ASSERT_TRUE(conv.is_ok());
  ASSERT_EQ(conv->size, 1000u);
  for (size_t i = 0; i < conv->size; ++i) ASSERT_EQ(conv->data[i], static_cast<uint8_t>(i * 7 + 1)) << i;
  EXPECT_EQ(engine->blob("fc.bias")->as_string_view(), "0123456789");
  EXPECT_EQ(engine->bytes().size, bytes.size());
}

TEST(EngineFile, BlobsAreAlignedInMemoryAndInTheFile) {
  const auto dir = temp_dir();
  const std::string path = dir / "aligned.engine";
  ASSERT_TRUE(sample_engine_writer().write_file(path).is_ok());
  auto engine = EngineFile::open(path);
  ASSERT_TRUE(engine.is_ok()) << engine.status().to_string();
  for (const EngineBlobInfo& info : engine->blobs()) {
    EXPECT_EQ(info.offset % kEngineAlignment, 0u) << info.name;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(engine->blob(info.name)->data) % kEngineAlignment, 0u) << info.name;
  }
  EXPECT_EQ(reinterpret_cast<uintptr_t>(engine->plan().data) % kEngineAlignment, 0u);
  std::filesystem::remove_all(dir);
}

TEST(EngineFile, WritingIsDeterministic) {
  EXPECT_EQ(sample_engine_bytes(), sample_engine_bytes());
}

TEST(EngineFile, ViewsOutliveTheFirstHandle) {
  const std::string bytes = sample_engine_bytes();
  ByteView plan;
  EngineFile copy = [&] {
    auto engine = EngineFile::from_bytes(bytes.data(), bytes.size());
    plan = engine->plan();
    return engine.value();
  }();
  EXPECT_EQ(plan.as_string_view(), copy.plan().as_string_view());
}

TEST(EngineFile, MissingBlobErrorListsTheBlobs) {
  const std::string bytes = sample_engine_bytes();
  auto engine = EngineFile::from_bytes(bytes.data(), bytes.size(), "x.engine");
  auto missing = engine->blob("conv.bias");
  ASSERT_FALSE(missing.is_ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("'conv.weight'"), std::string::npos) << missing.status().message();
}

TEST(EngineFile, EverySingleBitFlipIsDetected) {
  const std::string bytes = sample_engine_bytes();
  ASSERT_GT(bytes.size(), 1000u);
  for (size_t position = 0; position < bytes.size(); ++position) {
    std::string flipped = bytes;
    flipped[position] = static_cast<char>(flipped[position] ^ (1u << (position % 8)));
    auto engine = EngineFile::from_bytes(flipped.data(), flipped.size(), "flipped.engine");
    ASSERT_FALSE(engine.is_ok()) << "a flip at byte " << position << " went unnoticed";
    const std::string message = engine.status().message();
    EXPECT_NE(message.find("flipped.engine"), std::string::npos) << message;
  }
}

TEST(EngineFile, FlipsInTheContentsAreReportedAsChecksumMismatches) {
  const std::string bytes = sample_engine_bytes();
  std::string flipped = bytes;
  flipped[bytes.size() / 2] ^= 0x10;
  auto engine = EngineFile::from_bytes(flipped.data(), flipped.size(), "x.engine");
  ASSERT_FALSE(engine.is_ok());
  EXPECT_EQ(engine.status().code(), StatusCode::kCorruptData);
  EXPECT_NE(engine.status().message().find("checksum does not match"), std::string::npos)
      << engine.status().message();
}

TEST(EngineFile, TruncationAtEvery64thIsDetectedWithTheExpectedSize) {
  const std::string bytes = sample_engine_bytes(R"({"engine_name": "sample"})", 5000);
  for (int k = 0; k < 64; ++k) {
    const size_t size = bytes.size() * k / 64;
    auto engine = EngineFile::from_bytes(bytes.data(), size, "cut.engine");
    ASSERT_FALSE(engine.is_ok()) << "truncation to " << size << " bytes went unnoticed";
    EXPECT_EQ(engine.status().code(), StatusCode::kCorruptData);
    const std::string message = engine.status().message();
    EXPECT_NE(message.find("truncated"), std::string::npos) << message;
    if (size >= engine_layout::kHeaderSize + engine_layout::kChecksumSize)
      EXPECT_NE(message.find(fmt::format("expected {} bytes, file has {}", bytes.size(), size)), std::string::npos)
          << message;
  }
}

TEST(EngineFile, ExtraTrailingBytesAreDetected) {
  std::string bytes = sample_engine_bytes();
  bytes += "junk";
  auto engine = EngineFile::from_bytes(bytes.data(), bytes.size(), "x.engine");
  ASSERT_FALSE(engine.is_ok());
  EXPECT_NE(engine.status().message().find("header declares"), std::string::npos) << engine.status().message();
}

TEST(EngineFile, OtherFilesAreNotEngines) {
  const std::string text = "PK\x03\x04 this is a zip file, not an engine, and it is long enough to have a header....";
  auto engine = EngineFile::from_bytes(text.data(), text.size(), "model.zip");
  ASSERT_FALSE(engine.is_ok());
  EXPECT_NE(engine.status().message().find("'model.zip' is not a tensoracle engine file"), std::string::npos)
      << engine.status().message();
  EXPECT_FALSE(EngineFile::from_bytes("", 0, "empty.engine").is_ok());
}

TEST(EngineFile, AnotherFormatVersionIsUnsupportedNotCorrupt) {
  std::string bytes = sample_engine_bytes();
  engine_layout::store_u32(reinterpret_cast<uint8_t*>(bytes.data()) + engine_layout::kVersionOffset, 99);
  auto engine = EngineFile::from_bytes(bytes.data(), bytes.size(), "future.engine");
  ASSERT_FALSE(engine.is_ok());
  EXPECT_EQ(engine.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(engine.status().message().find("format version 99"), std::string::npos) << engine.status().message();
}

// A file whose checksum is right but whose table lies (a writer bug, or a crafted file) must still
// be refused without reading out of bounds.
TEST(EngineFile, LyingSectionTableIsRefusedEvenWithAValidChecksum) {
  using namespace engine_layout;
  const std::string bytes = sample_engine_bytes();
  struct Case {
    const char* name;
    size_t field;  // byte offset within the first section entry
    uint64_t value;
    bool wide;
    const char* expected;
  };
  const Case cases[] = {
      {"offset beyond the end", 16, 1u << 30, true, "outside the data area"},
      {"unaligned offset", 16, 257, true, "not a multiple of 256"},
      {"size beyond the end", 24, UINT64_MAX - 100, true, "outside the data area"},
      {"unknown kind", 0, 42, false, "unknown kind 42"},
      {"a named manifest", 4, 3, false, "only blobs are named"},
  };
  for (const Case& c : cases) {
    std::string lying = bytes;
    auto* data = reinterpret_cast<uint8_t*>(lying.data());
    uint8_t* entry = data + kHeaderSize + c.field;
    if (c.wide)
      store_u64(entry, c.value);
    else
      store_u32(entry, static_cast<uint32_t>(c.value));
    const Checksum fixed = checksum_of(data, lying.size() - kChecksumSize);
    std::memcpy(data + lying.size() - kChecksumSize, fixed.data(), fixed.size());
    auto engine = EngineFile::from_bytes(lying.data(), lying.size(), "lying.engine");
    ASSERT_FALSE(engine.is_ok()) << c.name;
    EXPECT_NE(engine.status().message().find(c.expected), std::string::npos)
        << c.name << ": " << engine.status().message();
  }
}

TEST(EngineWriter, RefusesIncompleteEngines) {
  EngineWriter writer;
  EXPECT_NE(writer.to_bytes().status().message().find("no key manifest"), std::string::npos);
  writer.set_manifest_json("[1, 2]");
  EXPECT_NE(writer.to_bytes().status().message().find("must be a JSON object"), std::string::npos);
  writer.set_manifest_json("{}");
  EXPECT_NE(writer.to_bytes().status().message().find("no environment"), std::string::npos);
  writer.set_environment(testing::sample_environment());
  EXPECT_NE(writer.to_bytes().status().message().find("no I/O table"), std::string::npos);
  writer.set_io_table(sample_io_table());
  EXPECT_NE(writer.to_bytes().status().message().find("no plan"), std::string::npos);
  writer.set_plan("");
  EXPECT_TRUE(writer.to_bytes().is_ok());
  EXPECT_TRUE(writer.add_blob("w", "abc").is_ok());
  EXPECT_FALSE(writer.add_blob("w", "def").is_ok());
  EXPECT_FALSE(writer.add_blob("", "def").is_ok());
}

TEST(IoTable, ValidationNamesTheTensorAndProfile) {
  IoTable table = sample_io_table();
  table.tensors[0].profiles[1].min = Dims{9, 3, 8, 8};
  const Status status = table.validate();
  ASSERT_FALSE(status.is_ok());
  EXPECT_NE(status.message().find("tensor 'image', profile 1, dimension 0"), std::string::npos) << status.message();

  table = sample_io_table();
  table.tensors.push_back(table.tensors[0]);
  EXPECT_NE(table.validate().message().find("'image' appears twice"), std::string::npos);

  table = sample_io_table();
  table.tensors[1].profiles[0] = ShapeRange::fixed({1, -1});
  EXPECT_TRUE(table.validate().is_ok()) << "an output dimension known only at run time";
  table.tensors[0].profiles[0] = ShapeRange::fixed({1, -1, 8, 8});
  EXPECT_FALSE(table.validate().is_ok()) << "inputs need concrete ranges";
}

}  // namespace
}  // namespace tensoracle
