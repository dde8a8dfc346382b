// Reading what a cubin says about itself: that it is a CUDA ELF, which SM it was built for, and
// which kernels it defines. The rules (docs/bundles.md, "How a cubin is read"):
//
//  * A cubin is a little-endian ELF64 file with e_machine == EM_CUDA (190).
//  * The SM number lives in e_flags, in a place that depends on the CUDA ELF ABI version in
//    e_ident[EI_ABIVERSION]:
//      ABI v1 (EI_ABIVERSION 7, EI_OSABI 0x33; toolkits up to CUDA 12): e_flags & 0xff
//        (e.g. 0x5a055a for sm_90: SM in bits 0-7, the PTX/virtual SM in bits 16-23);
//      ABI v2 (EI_ABIVERSION 8, EI_OSABI 0x41; CUDA 13 for every SM, CUDA 12.8+ for sm_100+):
//        (e_flags >> 8) & 0xff (e.g. 0x6005a04 for sm_90).
//    The 'a'/'f' feature variants (sm_90a) carry the same SM number.
//  * A kernel is a symbol of type STT_FUNC whose st_other has the STO_CUDA_ENTRY bit (0x10),
//    which ptxas sets on every __global__ function. Out-of-line __device__ functions are STT_FUNC
//    without that bit. (ptxas also emits a ".nv.info.<kernel>" section per kernel; we do not rely
//    on it.)
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tensoracle/status.h"

namespace tensoracle::bundle {

inline constexpr uint16_t kElfMachineCuda = 190;
inline constexpr unsigned char kCudaAbiV1 = 7;
inline constexpr unsigned char kCudaAbiV2 = 8;
inline constexpr unsigned char kStoCudaEntry = 0x10;

struct CubinInfo {
  int sm = 0;                        // 90 for sm_90
  int abi_version = 0;               // kCudaAbiV1 or kCudaAbiV2
  uint32_t e_flags = 0;
  std::vector<std::string> kernels;  // sorted, unique
};

// The SM number encoded in e_flags for a CUDA ELF ABI version; error for an unknown version.
Result<int> sm_from_elf_flags(unsigned char abi_version, uint32_t e_flags);

// Parses a cubin held in memory. Every failure is kCorruptData with a reason ("not an ELF file",
// "e_machine is 62, not EM_CUDA (190)", "unknown CUDA ELF ABI version 9", "symbol table ...").
Result<CubinInfo> read_cubin(const void* data, size_t size);

}  // namespace tensoracle::bundle
