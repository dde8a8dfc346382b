// Element types and shapes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tensoracle/status.h"

namespace tensoracle {

// Element types. The network API uses fp32, fp16, bf16, fp8 (e4m3), int8, int32, int64 and bool;
// the file formats (safetensors, npy, .pth) carry the rest too.
enum class DataType : uint8_t {
  kFloat32,
  kFloat16,
  kBFloat16,
  kFloat8E4M3,  // OCP fp8 e4m3 "fn": no infinities, NaN = S.1111.111, max finite 448
  kFloat8E5M2,  // OCP fp8 e5m2: IEEE-like, with infinities, max finite 57344
  kFloat64,
  kInt8,
  kUInt8,
  kInt16,
  kUInt16,
  kInt32,
  kUInt32,
  kInt64,
  kUInt64,
  kBool,  // one byte, 0 or 1
};

// Every DataType, in declaration order (for tables and exhaustive tests).
const std::vector<DataType>& all_data_types();

// Bytes per element.
size_t data_type_size(DataType type);

// The canonical short name: "fp32", "fp16", "bf16", "fp8e4m3", "fp8e5m2", "fp64", "int8", "uint8",
// "int16", "uint16", "int32", "uint32", "int64", "uint64", "bool".
std::string_view data_type_name(DataType type);

// Parses a canonical name or a common alias ("float32", "float", "half", "bfloat16", "e4m3", ...),
// case-insensitively. The error lists the accepted names.
Result<DataType> parse_data_type(std::string_view name);

bool is_floating_point(DataType type);  // fp32, fp16, bf16, fp8e4m3, fp8e5m2, fp64
bool is_integer(DataType type);         // signed and unsigned integers (not bool)
bool is_signed(DataType type);          // floating types and signed integers

// A shape. A dimension of -1 is dynamic (unknown until execution); all others are >= 0.
class Dims {
 public:
  static constexpr int64_t kDynamic = -1;
  static constexpr size_t kMaxRank = 8;

  Dims() = default;
  Dims(std::initializer_list<int64_t> dims) : dims_(dims) {}
  explicit Dims(std::vector<int64_t> dims) : dims_(std::move(dims)) {}

  size_t rank() const { return dims_.size(); }
  int64_t operator[](size_t i) const { return dims_[i]; }
  int64_t& operator[](size_t i) { return dims_[i]; }
  const std::vector<int64_t>& values() const { return dims_; }
  auto begin() const { return dims_.begin(); }
  auto end() const { return dims_.end(); }

  bool is_static() const;  // no dynamic dimension

  // Product of the dimensions (1 for rank 0). Errors on a dynamic or negative dimension and on
  // int64 overflow, naming the offending dimension.
  Result<int64_t> element_count() const;

  // element_count() * data_type_size(type), overflow-checked.
  Result<int64_t> byte_size(DataType type) const;

  // "[2,3,-1]".
  std::string to_string() const;

  bool operator==(const Dims& other) const { return dims_ == other.dims_; }
  bool operator!=(const Dims& other) const { return dims_ != other.dims_; }

 private:
  std::vector<int64_t> dims_;
};

// a * b and a + b for non-negative int64, or nullopt on overflow.
std::optional<int64_t> checked_mul(int64_t a, int64_t b);
std::optional<int64_t> checked_add(int64_t a, int64_t b);

}  // namespace tensoracle
