// The pointwise kernels: a whole PointwiseProgram (pointwise_program.h) held in the kernel's
// parameters runs per output element. Host code builds the arguments with PointwiseLaunch
// (pointwise_launch.h); this header is the plain-data contract between the two.
//
// Two kernels evaluate the same instructions with the same functions and roundings, so they give
// bit-identical results:
// - the interpreter: one element per thread, any geometry, any types, fp32 or fp64 compute;
// - the vector kernel, chosen by the host for the common cases (PointwiseVector): every input and
//   the output of one type among fp32/fp16/bf16, fp32 compute, a contiguous output. Each thread
//   takes 16 bytes of consecutive elements (8 fp16/bf16 or 4 fp32), loads each contiguous input
//   with one 16-byte load, decodes each instruction once for the whole vector and stores 16 bytes.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "backends/cuda/pointwise_program.h"

namespace tensoracle::backends::cuda {

constexpr int kMaxPointwiseInputs = 16;
constexpr int kMaxPointwiseInstrs = 32;
constexpr int kMaxPointwiseRank = 8;
constexpr int kMaxPointwiseRegisters = kMaxPointwiseInputs + kMaxPointwiseInstrs;
// Registers the vector kernel keeps beyond the instruction after them (more: the interpreter).
constexpr int kMaxPointwiseKept = 8;

struct PointwiseKernelInstr {
  PointwiseCode code = PointwiseCode::kCast;
  DataType type = DataType::kFloat32;  // the result is rounded to this type
  int8_t a = 0, b = 0, c = 0;          // source registers (unused ones are 0)
  int8_t operands = 1;                 // how many of a, b, c the instruction reads
  double alpha = 0, beta = 0;
};

// The vector kernel's geometries (the host checks every condition; the kernel trusts them).
enum class PointwiseVector : uint8_t {
  kNone,  // the interpreter
  // Merged rank 1: the output contiguous, every input contiguous (stride 1, its pointer 16-byte
  // aligned) or a scalar (stride 0). A scalar loop finishes the last count % width elements.
  kFlat,
  // Merged rank 2 [rows, cols], cols a multiple of the vector width, the output contiguous; each
  // input walks cols with stride 1 (16-byte aligned pointer, row stride a multiple of the width:
  // e.g. a bias [C] over [..., C] has row stride 0) or 0 (one value per row, or a scalar).
  kRows,
};

struct PointwiseKernelArgs {
  int num_inputs = 0;
  int num_instrs = 0;
  bool fp64 = false;  // compute type: fp64, else fp32
  // The output's elements in row-major order of `shape` (dims merged where every tensor allows;
  // rank 0 or 1 takes the kernel's flat path). Strides are in elements; 0 broadcasts.
  int rank = 0;
  int64_t count = 0;
  int64_t shape[kMaxPointwiseRank] = {};
  int64_t out_stride[kMaxPointwiseRank] = {};
  int64_t in_stride[kMaxPointwiseInputs][kMaxPointwiseRank] = {};
  DataType in_type[kMaxPointwiseInputs] = {};
  DataType out_type = DataType::kFloat32;
  const void* in[kMaxPointwiseInputs] = {};
  void* out = nullptr;
  PointwiseKernelInstr instrs[kMaxPointwiseInstrs] = {};
  // The vector kernel's: its geometry, and for each register read by an instruction other than
  // the one right after it, its slot (< kMaxPointwiseKept) in the kernel's array of kept vectors;
  // -1 for the others (the previous result is always at hand in registers).
  PointwiseVector vector = PointwiseVector::kNone;
  int8_t kept_slot[kMaxPointwiseRegisters] = {};
};

// Launches the kernel args.vector names with `threads` per block (a multiple of 32, at most
// 512); returns the launch status. Nothing is launched when args.count is 0.
cudaError_t launch_pointwise_kernel(const PointwiseKernelArgs& args, int threads, cudaStream_t stream);

}  // namespace tensoracle::backends::cuda
