// PthCheckpoint and convert_pth_to_safetensors on archives built here with libzip in torch.save's
// layout: key selection and naming, views and byte order, dtype conversion, archive diagnostics,
// and the no-output-on-failure guarantee.
#include <gtest/gtest.h>
#include <unistd.h>
#include <zip.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <random>

#include "host/pth/hostile_checkpoints.h"
#include "host/pth/pickle_builder.h"
#include "io/pth/materialize.h"
#include "io/pth/zip_offsets.h"
#include "tensoracle/float_formats.h"
#include "tensoracle/hashing.h"
#include "tensoracle/pth.h"
#include "tensoracle/safetensors.h"
#include "tensoracle/version.h"

namespace tensoracle {
namespace {

namespace fs = std::filesystem;
using namespace pth::pickle_ops;  // NOLINT: the opcode spellings

template <typename T>
std::string bytes_of(const std::vector<T>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

class PthRead : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::path(::testing::TempDir()) / "pth_read_XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Writes a zip with `entries` (name -> bytes), stored uncompressed like torch.save.
  std::string write_zip(const std::string& file, const std::map<std::string, std::string>& entries) {
    const std::string path = (dir_ / file).string();
    EXPECT_TRUE(pth::hostile::write_zip(path, entries));
    return path;
  }

  // A torch-layout checkpoint: archive/data.pkl = proto 2 + `object` + STOP, plus storages.
  std::string write_checkpoint(const std::string& object, const std::map<std::string, std::string>& storages,
                               const std::string& byteorder = "little") {
    std::map<std::string, std::string> entries = {{"archive/data.pkl", proto(2) + object + stop()},
                                                  {"archive/version", "3\n"}};
    if (!byteorder.empty()) entries["archive/byteorder"] = byteorder;
    for (const auto& [key, bytes] : storages) entries["archive/data/" + key] = bytes;
    return write_zip("model.pth", entries);
  }

  fs::path dir_;
};

std::string dict_of(const std::vector<std::pair<std::string, std::string>>& items) {
  std::string out = empty_dict() + mark();
  for (const auto& [key, value] : items) out += str(key) + value;
  return out + setitems();
}

const std::vector<float> kTwelve = {0.5f, -1, 2, 3.25f, 4, 5, -6, 7, 8, 9.5f, 10, 11};

std::string fp32_tensor(uint8_t offset, std::initializer_list<uint8_t> size, std::initializer_list<uint8_t> stride) {
  return tensor_v2(storage("FloatStorage", "0", 12), offset, int_tuple(size), int_tuple(stride));
}

std::vector<float> floats_of(const ArrayView& view) {
  const float* data = static_cast<const float*>(view.data);
  return std::vector<float>(data, data + view.element_count());
}

TEST_F(PthRead, NamesTensorsByTheirPathAndNotesTheRest) {
  const std::string object =
      dict_of({{"model", dict_of({{"layer.weight", fp32_tensor(0, {3, 4}, {4, 1})}, {"step", binint1(9)}})},
               {"buffers", mark() + fp32_tensor(0, {2}, {1}) + none() + tuple()},
               {"groups", empty_list() + mark() + dict_of({{"lr", binfloat_one_half()}, {"ids", int_tuple({1, 2})}}) +
                              appends()}});
  auto checkpoint = PthCheckpoint::read(write_checkpoint(object, {{"0", bytes_of(kTwelve)}}));
  ASSERT_TRUE(checkpoint.is_ok()) << checkpoint.status().to_string();
  EXPECT_EQ(checkpoint->names_in_file_order(), (std::vector<std::string>{"model.layer.weight", "buffers.0"}));
  EXPECT_EQ(checkpoint->notes(), (std::vector<std::string>{"skipped 'model.step' (int 9)", "skipped 'buffers.1' (None)",
                                                           "skipped 'groups' (list without tensors)"}));
}

TEST_F(PthRead, KeySelectsByLongestDottedKeyOrIndex) {
  const std::string object =
      dict_of({{"model", dict_of({{"state_dict", dict_of({{"w", fp32_tensor(0, {12}, {1})}})}})},
               {"ema.decay", dict_of({{"b", fp32_tensor(4, {2}, {1})}})},
               {"list", empty_list() + mark() + none() + fp32_tensor(1, {3}, {1}) + appends()}});
  const std::string path = write_checkpoint(object, {{"0", bytes_of(kTwelve)}});
  const std::pair<std::string, std::vector<std::string>> cases[] = {
      {"model.state_dict", {"w"}}, {"ema.decay", {"b"}}, {"list.1", {"1"}}, {"model.state_dict.w", {"w"}}};
  for (const auto& [key, names] : cases) {
    PthOptions options;
    options.key = key;
    auto checkpoint = PthCheckpoint::read(path, options);
    ASSERT_TRUE(checkpoint.is_ok()) << key << ": " << checkpoint.status().to_string();
    EXPECT_EQ(checkpoint->names_in_file_order(), names) << key;
  }
  PthOptions missing;
  missing.key = "model.optimizer";
  auto status = PthCheckpoint::read(path, missing).status();
  EXPECT_EQ(status.code(), StatusCode::kNotFound);
  EXPECT_NE(status.message().find("'model' has no entry 'optimizer' (it has 'state_dict')"), std::string::npos)
      << status.message();
}

TEST_F(PthRead, ViewsSharingAStorageAreEachMaterializedInFull) {
  const std::string object = dict_of({{"base", fp32_tensor(0, {3, 4}, {4, 1})},
                                      {"t", fp32_tensor(0, {4, 3}, {1, 4})},
                                      {"col", fp32_tensor(2, {3}, {4})},
                                      {"bcast", fp32_tensor(8, {2, 4}, {0, 1})}});
  auto checkpoint = PthCheckpoint::read(write_checkpoint(object, {{"0", bytes_of(kTwelve)}}));
  ASSERT_TRUE(checkpoint.is_ok()) << checkpoint.status().to_string();
  const auto& t = checkpoint->tensors();
  // Each element of a view is storage[offset + sum(index * stride)].
  EXPECT_EQ(floats_of(t.at("base")), kTwelve);
  const std::vector<float> transposed = {kTwelve[0], kTwelve[4], kTwelve[8], kTwelve[1], kTwelve[5], kTwelve[9],
                                         kTwelve[2], kTwelve[6], kTwelve[10], kTwelve[3], kTwelve[7], kTwelve[11]};
  EXPECT_EQ(floats_of(t.at("t")), transposed);
  EXPECT_EQ(floats_of(t.at("col")), (std::vector<float>{kTwelve[2], kTwelve[6], kTwelve[10]}));
  EXPECT_EQ(floats_of(t.at("bcast")), (std::vector<float>{8, 9.5f, 10, 11, 8, 9.5f, 10, 11}));
  EXPECT_EQ(t.at("t").shape, Dims({4, 3}));
}

TEST(PthGather, MatchesTheStrideFormulaOnRandomLayouts) {
  std::mt19937 rng(1234);
  std::vector<int16_t> storage(4096);
  for (size_t i = 0; i < storage.size(); ++i) storage[i] = static_cast<int16_t>(i * 7 + 3);
  pth::StorageRef ref{"0", "cpu", DataType::kInt16, false, static_cast<int64_t>(storage.size())};
  for (int trial = 0; trial < 200; ++trial) {
    pth::TensorRef tensor;
    tensor.storage = &ref;
    tensor.dtype = DataType::kInt16;
    const size_t rank = rng() % 5;
    tensor.offset = rng() % 16;
    for (size_t d = 0; d < rank; ++d) {
      tensor.sizes.push_back(rng() % 5);
      tensor.strides.push_back(rng() % 9);  // includes 0 (broadcast) and overlapping strides
    }
    ASSERT_TRUE(pth::check_tensor_bounds("t", tensor).is_ok());
    const int64_t count = *Dims(tensor.sizes).element_count();
    std::vector<int16_t> got(static_cast<size_t>(count));
    pth::gather(tensor, reinterpret_cast<const uint8_t*>(storage.data()), reinterpret_cast<uint8_t*>(got.data()));
    for (int64_t linear = 0; linear < count; ++linear) {
      int64_t rest = linear, at = tensor.offset;
      for (size_t d = rank; d-- > 0;) {
        at += (rest % tensor.sizes[d]) * tensor.strides[d];
        rest /= tensor.sizes[d];
      }
      ASSERT_EQ(got[static_cast<size_t>(linear)], storage[static_cast<size_t>(at)]) << "trial " << trial;
    }
  }
}

// A zip64 archive spelled byte by byte: the central directory's 32-bit sizes and local-header
// offset are saturated and the real values sit in the zip64 extra field, as torch.save writes
// them for checkpoints over 4 GiB.
TEST(PthZipOffsets, ReadsZip64CentralDirectories) {
  const std::string name = "archive/data/0", data = "ABCDEFGH";
  std::string zip = le(0x04034b50, 4) + le(45, 2) + le(0, 2) + le(0, 2) + le(0, 4) + le(0, 4) + le(0xFFFFFFFF, 4) +
                    le(0xFFFFFFFF, 4) + le(name.size(), 2) + le(0, 2) + name + data;
  const uint64_t directory = zip.size();
  const std::string extra = le(0x0001, 2) + le(24, 2) + le(data.size(), 8) + le(data.size(), 8) + le(0, 8);
  zip += le(0x02014b50, 4) + le(45, 2) + le(45, 2) + le(0, 2) + le(0, 2) + le(0, 4) + le(0, 4) + le(0xFFFFFFFF, 4) +
         le(0xFFFFFFFF, 4) + le(name.size(), 2) + le(extra.size(), 2) + le(0, 2) + le(0, 2) + le(0, 2) + le(0, 4) +
         le(0xFFFFFFFF, 4) + name + extra;
  const uint64_t directory_size = zip.size() - directory, record = zip.size();
  zip += le(0x06064b50, 4) + le(44, 8) + le(45, 2) + le(45, 2) + le(0, 4) + le(0, 4) + le(1, 8) + le(1, 8) +
         le(directory_size, 8) + le(directory, 8);
  zip += le(0x07064b50, 4) + le(0, 4) + le(record, 8) + le(1, 4);
  zip += le(0x06054b50, 4) + le(0, 2) + le(0, 2) + le(0xFFFF, 2) + le(0xFFFF, 2) + le(0xFFFFFFFF, 4) +
         le(0xFFFFFFFF, 4) + le(0, 2);
  auto entries = pth::find_stored_entries(reinterpret_cast<const uint8_t*>(zip.data()), zip.size());
  ASSERT_TRUE(entries.is_ok()) << entries.status().to_string();
  ASSERT_EQ(entries->count(name), 1u);
  const pth::StoredEntry entry = entries->at(name);
  EXPECT_EQ(zip.substr(entry.data_offset, entry.size), data);

  // The same directory pointing its entry past the end of the file is refused.
  std::string lying = zip;
  lying.replace(directory + 46 + name.size() + 4, 8, le(1 << 20, 8));  // uncompressed size
  lying.replace(directory + 46 + name.size() + 12, 8, le(1 << 20, 8));  // compressed size
  auto refused = pth::find_stored_entries(reinterpret_cast<const uint8_t*>(lying.data()), lying.size());
  ASSERT_FALSE(refused.is_ok());
  EXPECT_NE(refused.status().message().find("extends past the end of the file"), std::string::npos)
      << refused.status().message();
}

TEST_F(PthRead, BigEndianArchivesAreConvertedForEveryElementSize) {
  const std::vector<int16_t> i16 = {1, -2, 300, -32768};
  const std::vector<double> f64 = {0.1, -2.5e300};
  auto swapped = [](std::string bytes, size_t element) {
    for (size_t i = 0; i < bytes.size(); i += element) std::reverse(bytes.begin() + i, bytes.begin() + i + element);
    return bytes;
  };
  const std::string object =
      dict_of({{"i16", tensor_v2(storage("ShortStorage", "a", 4), 0, int_tuple({4}), int_tuple({1}))},
               {"f64", tensor_v2(storage("DoubleStorage", "b", 2), 0, int_tuple({2}), int_tuple({1}))}});
  auto checkpoint = PthCheckpoint::read(
      write_checkpoint(object, {{"a", swapped(bytes_of(i16), 2)}, {"b", swapped(bytes_of(f64), 8)}}, "big"));
  ASSERT_TRUE(checkpoint.is_ok()) << checkpoint.status().to_string();
  EXPECT_EQ(std::memcmp(checkpoint->tensors().at("i16").data, i16.data(), 8), 0);
  EXPECT_EQ(std::memcmp(checkpoint->tensors().at("f64").data, f64.data(), 16), 0);
}

TEST_F(PthRead, FloatDtypeConvertsOnlyWideFloatTensors) {
  const std::vector<double> f64 = {0.1, 65504.0 * 2, -3.0};
  const std::vector<int32_t> i32 = {7, -8};
  const std::string object =
      dict_of({{"f64", tensor_v2(storage("DoubleStorage", "a", 3), 0, int_tuple({3}), int_tuple({1}))},
               {"i32", tensor_v2(storage("IntStorage", "b", 2), 0, int_tuple({2}), int_tuple({1}))}});
  PthOptions options;
  options.float_dtype = DataType::kFloat16;
  auto checkpoint =
      PthCheckpoint::read(write_checkpoint(object, {{"a", bytes_of(f64)}, {"b", bytes_of(i32)}}), options);
  ASSERT_TRUE(checkpoint.is_ok()) << checkpoint.status().to_string();
  const ArrayView& half = checkpoint->tensors().at("f64");
  ASSERT_EQ(half.dtype, DataType::kFloat16);
  for (size_t i = 0; i < f64.size(); ++i)  // torch rounds fp64 -> fp32 -> fp16, as does core
    EXPECT_EQ(static_cast<const uint16_t*>(half.data)[i], float_to_fp16(static_cast<float>(f64[i])));
  EXPECT_EQ(checkpoint->tensors().at("i32").dtype, DataType::kInt32);
  options.float_dtype = DataType::kInt8;
  EXPECT_EQ(PthCheckpoint::read(dir_ / "model.pth", options).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(PthRead, ArchiveProblemsAreDiagnosed) {
  const std::string tensor = dict_of({{"w", fp32_tensor(0, {12}, {1})}});
  auto message = [](const std::string& path) { return PthCheckpoint::read(path).status().message(); };
  EXPECT_NE(message(write_checkpoint(tensor, {{"0", bytes_of(kTwelve)}}, "middle")).find("expected 'little' or 'big'"),
            std::string::npos);
  EXPECT_NE(message(write_zip("script.pt", {{"m/constants.pkl", proto(2) + none() + stop()}, {"m/code/x.py", ""}}))
                .find("TorchScript"),
            std::string::npos);
  EXPECT_NE(message(write_zip("two.pth", {{"a/data.pkl", proto(2) + none() + stop()},
                                          {"b/data.pkl", proto(2) + none() + stop()}}))
                .find("2 data.pkl records"),
            std::string::npos);
  EXPECT_NE(message(write_checkpoint(dict_of({{"epoch", binint1(3)}}), {})).find("holds no tensors\n  skipped 'epoch'"),
            std::string::npos);
  EXPECT_NE(message(write_checkpoint(dict_of({{"w", fp32_tensor(0, {12}, {1})}, {"w", fp32_tensor(0, {12}, {1})}}),
                                     {{"0", bytes_of(kTwelve)}}))
                .find("two tensors are named 'w'"),
            std::string::npos);
  EXPECT_EQ(PthCheckpoint::read((dir_ / "absent.pth").string()).status().code(), StatusCode::kIoError);
}

TEST_F(PthRead, ConversionWritesAtomicallyAndNeverOverTheInput) {
  const std::string good = write_checkpoint(dict_of({{"w", fp32_tensor(0, {12}, {1})}}), {{"0", bytes_of(kTwelve)}});
  const std::string out = (dir_ / "out.safetensors").string();
  ASSERT_TRUE(convert_pth_to_safetensors(good, out).is_ok());
  auto written = SafetensorsFile::open(out);
  ASSERT_TRUE(written.is_ok()) << written.status().to_string();
  EXPECT_EQ(floats_of(*written->view("w")), kTwelve);
  EXPECT_EQ(written->metadata().at("format"), "pt");

  // A failing conversion leaves an existing output untouched and adds nothing to the directory.
  const std::string hostile = write_zip("bad.pth", {{"archive/data.pkl", proto(2) + global("os", "system") + stop()}});
  const auto files_before = std::distance(fs::directory_iterator(dir_), fs::directory_iterator());
  const auto size_before = fs::file_size(out);
  EXPECT_FALSE(convert_pth_to_safetensors(hostile, out).is_ok());
  EXPECT_EQ(fs::file_size(out), size_before);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), files_before);

  auto same = convert_pth_to_safetensors(good, good);
  EXPECT_EQ(same.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(PthCheckpoint::read(good).is_ok()) << "the input was damaged";
}

// The source hash is written into a header field reserved for it after the tensor data
// (overlapping hashing with writing); the file must be byte for byte what writing the tensors with
// the hash known from the start gives.
TEST_F(PthRead, ConversionGivesTheBytesOfAWriteWithTheHashKnownFirst) {
  const std::string good = write_checkpoint(
      dict_of({{"w", fp32_tensor(0, {12}, {1})}, {"w_t", fp32_tensor(0, {3, 4}, {1, 3})}, {"w_tail", fp32_tensor(4, {8}, {1})}}),
      {{"0", bytes_of(kTwelve)}});
  auto read_all = [](const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  auto source_hash = sha256_file_hex(good);
  ASSERT_TRUE(source_hash.is_ok());
  // Tensors written in place from the input's mapping, and converted copies.
  for (const std::optional<DataType> float_dtype : {std::optional<DataType>(), std::optional(DataType::kBFloat16)}) {
    PthOptions options;
    options.float_dtype = float_dtype;
    const std::string out = (dir_ / "out.safetensors").string();
    auto conversion = convert_pth_to_safetensors(good, out, options);
    ASSERT_TRUE(conversion.is_ok()) << conversion.status().to_string();
    EXPECT_EQ(conversion->source_sha256, *source_hash);

    auto checkpoint = PthCheckpoint::read(good, options);
    ASSERT_TRUE(checkpoint.is_ok());
    SafetensorsWriteOptions sequential;
    sequential.metadata = {{"format", "pt"},
                           {"source_file", "model.pth"},
                           {"source_sha256", *source_hash},
                           {"tensor_count", "3"},
                           {"converter", "tensoracle " TENSORACLE_VERSION_STRING}};
    if (float_dtype) sequential.metadata["float_dtype"] = "bf16";
    const std::string expected = (dir_ / "expected.safetensors").string();
    ASSERT_TRUE(write_safetensors(expected, checkpoint->tensors(), sequential).is_ok());
    EXPECT_EQ(read_all(out), read_all(expected)) << (float_dtype ? "bf16" : "keep");
  }
}

// A few hundred bytes of stride-0 views can ask for terabytes: the total is checked against the
// limit before any storage is read or any tensor materialized or written.
TEST_F(PthRead, ExpansionOverTheOutputLimitIsRefusedBeforeAnyWork) {
  const std::string bomb = (dir_ / "bomb.pth").string();
  ASSERT_TRUE(pth::hostile::write_stride0_bomb(bomb, 100, int32_t{1} << 30));  // 100 x 4 GiB from 4 bytes
  const std::string out = (dir_ / "out.safetensors").string();
  auto refused = convert_pth_to_safetensors(bomb, out);
  ASSERT_EQ(refused.status().code(), StatusCode::kInvalidArgument) << refused.status().to_string();
  const std::string message = refused.status().message();
  EXPECT_NE(message.find("its 100 tensors expand to 400.0 GiB (429496729600 bytes) of dense data, over the default "
                         "limit, the larger of 16.0 GiB and 8x the checkpoint's"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("the largest is 't0' (fp32 [1073741824], 4.0 GiB, a view that is not contiguous)"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("--max-output-size"), std::string::npos) << message;
  EXPECT_EQ(PthCheckpoint::read(bomb).status().code(), StatusCode::kInvalidArgument) << "reading is bounded too";
  EXPECT_FALSE(fs::exists(out));

  // The limit is the caller's to set, both ways.
  const std::string small = (dir_ / "small.pth").string();
  ASSERT_TRUE(pth::hostile::write_stride0_bomb(small, 4, 1 << 16));  // 4 x 256 KiB
  PthOptions options;
  options.max_output_bytes = uint64_t{1} << 20;
  EXPECT_TRUE(convert_pth_to_safetensors(small, out, options).is_ok()) << "exactly at the limit";
  options.max_output_bytes = (uint64_t{1} << 20) - 1;
  auto over = convert_pth_to_safetensors(small, out, options);
  EXPECT_NE(over.status().message().find("over the limit given (1024.0 KiB)"), std::string::npos)
      << over.status().message();
}

TEST(PthOutputLimit, IsTheLargerOf16GiBAnd8xTheCheckpoint) {
  EXPECT_EQ(default_pth_output_limit(0), uint64_t{16} << 30);
  EXPECT_EQ(default_pth_output_limit(uint64_t{2} << 30), uint64_t{16} << 30);
  EXPECT_EQ(default_pth_output_limit(uint64_t{3} << 30), uint64_t{24} << 30);
  EXPECT_EQ(default_pth_output_limit(UINT64_MAX / 2), UINT64_MAX);
}

TEST_F(PthRead, ProgressFollowsMaterializingThenWriting) {
  const std::string bomb = (dir_ / "views.pth").string();
  ASSERT_TRUE(pth::hostile::write_stride0_bomb(bomb, 3, 10 << 20));  // 3 x 40 MiB of views
  std::vector<PthProgress> reports;
  PthOptions options;
  options.progress = [&](const PthProgress& p) { reports.push_back(p); };
  ASSERT_TRUE(convert_pth_to_safetensors(bomb, (dir_ / "out.safetensors").string(), options).is_ok());
  ASSERT_FALSE(reports.empty());
  std::string previous_stage = "materializing";
  uint64_t previous_done = 0;
  for (const PthProgress& p : reports) {
    if (std::string(p.stage) != previous_stage) {
      EXPECT_EQ(previous_stage, "materializing");
      EXPECT_EQ(std::string(p.stage), "writing");
      previous_stage = p.stage, previous_done = 0;
    }
    EXPECT_GE(p.done_bytes, previous_done);
    EXPECT_LE(p.done_bytes, p.total_bytes);
    previous_done = p.done_bytes;
  }
  EXPECT_EQ(std::string(reports.front().stage), "materializing");
  EXPECT_EQ(reports.front().total_bytes, uint64_t{120} << 20);
  EXPECT_EQ(std::string(reports.back().stage), "writing");
  EXPECT_GT(reports.back().done_bytes, uint64_t{110} << 20);
  EXPECT_EQ(reports.back().total_bytes, fs::file_size(dir_ / "out.safetensors"));
}

}  // namespace
}  // namespace tensoracle
