// The pointwise kernels: a whole PointwiseProgram (pointwise_program.h) held in the kernel's
// parameters runs per output element. Host code builds the arguments with PointwiseLaunch
// (pointwise_launch.h); this header is the plain-data contract between the two.
//
// The kernels evaluate the same instructions with the same functions and roundings, so they give
// bit-identical results:
// - the interpreter: one element per thread, any geometry, any types, fp32 or fp64 compute;
// - the vector kernel, chosen by the host for the common cases (PointwiseVector): the output of
//   one type among fp32/fp16/bf16, or int8/fp8 written by a final quantize, contiguous, fp32
//   compute. Each thread takes 16 bytes of lanes (8 fp16/bf16 or 4 fp32: lane_type) of
//   consecutive output elements, reads each input for them as PointwiseInput says (one 16-byte
//   load, one broadcast value, or lane by lane), decodes each instruction once for the whole
//   vector and stores 16 bytes (a quantized output: one byte per lane). A one-input program of one
//   common activation over a flat geometry (alone, or followed by a quantize by a scalar scale)
//   runs a copy of it specialized for that activation, 4 vectors per thread with every load
//   issued before any compute.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "backends/cuda/pointwise_program.h"

namespace tensoracle::backends::cuda {

constexpr int kMaxPointwiseInputs = 16;
constexpr int kMaxPointwiseInstrs = 32;
constexpr int kMaxPointwiseRank = 8;
constexpr int kMaxPointwiseRegisters = kMaxPointwiseInputs + kMaxPointwiseInstrs;
// Computed registers the vector kernel keeps beyond the instruction after them (more: the
// interpreter). Inputs are never kept: an instruction reading one loads it again.
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
  // Merged rank <= 1: the output contiguous, every input of the lane type and contiguous (its
  // pointer 16-byte aligned) or a scalar (of any of fp32/fp16/bf16). A scalar loop finishes the last count % width
  // elements.
  kFlat,
  // Any merged rank >= 1 with the output contiguous, fewer than 2^31 elements, every input
  // fp32/fp16/bf16. Each thread splits its first element's index into coordinates once (32-bit)
  // and reads each input as in_mode says.
  kStrided,
};

// How the vector kernel reads one input for a vector of N consecutive output elements.
enum class PointwiseInput : uint8_t {
  // One 16-byte load: the input has the lane type, walks the innermost dim with stride 1,
  // that dim is a multiple of N, its pointer and every outer stride (in bytes) are multiples of 16.
  kVector,
  // One value for all N lanes: stride 0 along an innermost dim that is a multiple of N (kFlat:
  // a scalar).
  kBroadcast,
  // Lane by lane, the coordinates advanced with a carry from lane to lane (kStrided only).
  kGather,
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
  // The vector kernel's lane type: the output's type, or, for a program ending in a quantize
  // (kQuantize) to int8 or fp8, the type of the value it quantizes; lanes are 16 bytes of it, and
  // the output stores one code per lane.
  DataType lane_type = DataType::kFloat32;
  const void* in[kMaxPointwiseInputs] = {};
  void* out = nullptr;
  PointwiseKernelInstr instrs[kMaxPointwiseInstrs] = {};
  // The vector kernel's: its geometry, how it reads each input (set by run() from the pointers),
  // and for each computed register read by an instruction other than the one right after it, its
  // slot (< kMaxPointwiseKept) in the kernel's array of kept vectors; -1 for the others (the
  // previous result is always at hand in registers; inputs are loaded where they are read).
  // `kept`: how many slots are used (0: the kernel has no kept array at all).
  PointwiseVector vector = PointwiseVector::kNone;
  PointwiseInput in_mode[kMaxPointwiseInputs] = {};
  int8_t kept_slot[kMaxPointwiseRegisters] = {};
  int kept = 0;
};

// Launches the kernel args.vector names with `threads` per block (a multiple of 32, at most
// 512); returns the launch status. Nothing is launched when args.count is 0.
cudaError_t launch_pointwise_kernel(const PointwiseKernelArgs& args, int threads, cudaStream_t stream);

}  // namespace tensoracle::backends::cuda
