// Reading cubins: CUDA ELF validity, the SM number for both ELF ABIs, kernel symbols.
#include "bundle/cubin_elf.h"

#include <gtest/gtest.h>

#include "host/bundle/bundle_test_util.h"

namespace tensoracle::bundle {
namespace {

using testing::example_bundle;
using testing::read_bytes;

const std::string kFixtures = TENSORACLE_FIXTURES_DIR "/bundle/";

Result<CubinInfo> read(const std::string& bytes) { return read_cubin(bytes.data(), bytes.size()); }

TEST(CubinElf, ReadsCuda12AbiV1Cubins) {
  // Built by CUDA 12.9's ptxas (tests/fixtures/bundle/generate.sh): SM in the low byte of e_flags.
  for (int sm : {86, 90}) {
    auto info = read(read_bytes(kFixtures + "abi_v1_sm" + std::to_string(sm) + ".cubin"));
    ASSERT_TRUE(info.is_ok()) << info.status().message();
    EXPECT_EQ(info->abi_version, kCudaAbiV1);
    EXPECT_EQ(info->sm, sm);
    // Every __global__ of abi_v1_kernels.cu, the template instance under its mangled name; the
    // __device__ helper is not a kernel.
    EXPECT_EQ(info->kernels, (std::vector<std::string>{"_Z8fill_oneIfEvPT_", "add2", "scale_add"}));
  }
}

TEST(CubinElf, ReadsCuda13AbiV2Cubins) {
  for (int sm : {86, 90}) {
    const std::string arch = "sm_" + std::to_string(sm);
    auto info = read(read_bytes(example_bundle() / arch / "binary.cubin"));
    ASSERT_TRUE(info.is_ok()) << info.status().message();
    EXPECT_EQ(info->abi_version, kCudaAbiV2);
    EXPECT_EQ(info->sm, sm);
    EXPECT_EQ(info->kernels, (std::vector<std::string>{"gated_residual"}));
  }
}

TEST(CubinElf, SmNumberFollowsTheAbiVersion) {
  // e_flags values as nvcc 12.9 and 13.0 wrote them for sm_90 and sm_120.
  EXPECT_EQ(*sm_from_elf_flags(kCudaAbiV1, 0x5a055a), 90);
  EXPECT_EQ(*sm_from_elf_flags(kCudaAbiV2, 0x6005a04), 90);
  EXPECT_EQ(*sm_from_elf_flags(kCudaAbiV2, 0x6007802), 120);
  EXPECT_EQ(sm_from_elf_flags(9, 0x5a).status().message(), "unknown CUDA ELF ABI version 9 (known: 7 and 8)");
}

class DamagedCubin : public ::testing::Test {
 protected:
  std::string good_ = read_bytes(example_bundle() / "sm_90" / "elementwise.cubin");
};

TEST_F(DamagedCubin, NotAnElfFile) {
  EXPECT_EQ(read("// not a cubin\n").status().message(), "not an ELF file");
  EXPECT_EQ(read("").status().message(), "not an ELF file");
}

TEST_F(DamagedCubin, WrongMachine) {
  std::string bytes = good_;
  bytes[18] = 62;  // e_machine = EM_X86_64
  bytes[19] = 0;
  EXPECT_EQ(read(bytes).status().message(), "e_machine is 62, not EM_CUDA (190)");
}

TEST_F(DamagedCubin, ThirtyTwoBitClass) {
  std::string bytes = good_;
  bytes[4] = 1;  // ELFCLASS32
  EXPECT_EQ(read(bytes).status().message(), "not a 64-bit ELF file (class 1)");
}

TEST_F(DamagedCubin, UnknownAbiVersion) {
  std::string bytes = good_;
  bytes[8] = 42;  // EI_ABIVERSION
  EXPECT_EQ(read(bytes).status().message(), "unknown CUDA ELF ABI version 42 (known: 7 and 8)");
}

TEST_F(DamagedCubin, TruncatedAnywhereIsAnErrorNotACrash) {
  for (size_t size : {size_t{20}, size_t{64}, size_t{200}, good_.size() / 2, good_.size() - 1}) {
    auto info = read(good_.substr(0, size));
    EXPECT_FALSE(info.is_ok()) << "truncated to " << size;
    if (!info.is_ok()) EXPECT_EQ(info.status().code(), StatusCode::kCorruptData);
  }
}

}  // namespace
}  // namespace tensoracle::bundle
