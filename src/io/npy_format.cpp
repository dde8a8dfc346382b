#include "io/npy_format.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "core/errors.h"

namespace tensoracle {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
constexpr size_t kMaxNumpyDims = 64;  // NPY_MAXDIMS of numpy 2

struct Descriptor {
  std::string_view code;  // without the byte-order character
  DataType dtype;
};
// numpy's own type codes, then the ml_dtypes names (numpy's dtype() understands those once
// ml_dtypes is imported; np.save cannot write them, see docs/file-formats.md).
constexpr std::array<Descriptor, 15> kDescriptors{{
    {"f2", DataType::kFloat16},
    {"f4", DataType::kFloat32},
    {"f8", DataType::kFloat64},
    {"i1", DataType::kInt8},
    {"u1", DataType::kUInt8},
    {"i2", DataType::kInt16},
    {"u2", DataType::kUInt16},
    {"i4", DataType::kInt32},
    {"u4", DataType::kUInt32},
    {"i8", DataType::kInt64},
    {"u8", DataType::kUInt64},
    {"b1", DataType::kBool},
    {"bfloat16", DataType::kBFloat16},
    {"float8_e4m3fn", DataType::kFloat8E4M3},
    {"float8_e5m2", DataType::kFloat8E5M2},
}};

std::string descriptor_of(DataType dtype) {
  for (const auto& descriptor : kDescriptors) {
    if (descriptor.dtype != dtype) continue;
    if (descriptor.code.size() != 2) return std::string(descriptor.code);
    return std::string(data_type_size(dtype) == 1 ? "|" : "<") + std::string(descriptor.code);
  }
  return "?";
}

Status parse_descriptor(std::string_view descr, NpyHeader& header) {
  std::string_view code = descr;
  char order = '=';
  if (!code.empty() && std::strchr("<>|=", code.front()) != nullptr) {
    order = code.front();
    code.remove_prefix(1);
  }
  for (const auto& descriptor : kDescriptors) {
    if (descriptor.code != code) continue;
    if (descriptor.code.size() != 2 && order != '=')
      break;  // the ml_dtypes names carry no byte order
    header.dtype = descriptor.dtype;
    header.byte_swapped = order == '>' && data_type_size(descriptor.dtype) > 1;
    return Status::ok();
  }
  if (descr == "<V2" || descr == "|V2" || descr == "<V1" || descr == "|V1" || descr == "<f1")
    return unsupported(
        "unsupported dtype descriptor '{}': this is how np.save stores ml_dtypes arrays (bfloat16, float8), losing "
        "their type; write the descr 'bfloat16', 'float8_e4m3fn' or 'float8_e5m2' instead (docs/file-formats.md)",
        descr);
  return unsupported(
      "unsupported dtype descriptor '{}' (supported: f2 f4 f8 i1 u1 i2 u2 i4 u4 i8 u8 b1 in either byte order, "
      "bfloat16, float8_e4m3fn, float8_e5m2)",
      descr);
}

// A tokenizer-parser for the subset of Python literals numpy writes in the header dict: strings,
// True/False, and tuples of integers. Anything else is rejected, never evaluated.
class DictParser {
 public:
  explicit DictParser(std::string_view text) : text_(text) {}

  Status parse(NpyHeader& header) {
    bool have_descr = false, have_order = false, have_shape = false;
    TO_RETURN_IF_ERROR(expect('{'));
    while (true) {
      skip_space();
      if (peek() == '}') break;
      std::string key;
      TO_RETURN_IF_ERROR(parse_string(key));
      TO_RETURN_IF_ERROR(expect(':'));
      if (key == "descr") {
        if (std::exchange(have_descr, true)) return duplicate(key);
        skip_space();
        if (peek() == '[' || peek() == '{')
          return unsupported("structured dtypes (a 'descr' list) are not supported");
        std::string descr;
        TO_RETURN_IF_ERROR(parse_string(descr));
        TO_RETURN_IF_ERROR(parse_descriptor(descr, header));
      } else if (key == "fortran_order") {
        if (std::exchange(have_order, true)) return duplicate(key);
        TO_RETURN_IF_ERROR(parse_bool(header.fortran_order));
      } else if (key == "shape") {
        if (std::exchange(have_shape, true)) return duplicate(key);
        TO_RETURN_IF_ERROR(parse_shape(header.shape));
      } else {
        return corrupt_data("the header has the unknown key '{}' (expected descr, fortran_order, shape)", key);
      }
      skip_space();
      if (peek() == ',') {
        ++position_;
        continue;
      }
      if (peek() != '}') return syntax("',' or '}'");
    }
    ++position_;
    skip_space();
    if (position_ != text_.size()) return syntax("the end of the header");
    if (!have_descr) return corrupt_data("the header has no 'descr'");
    if (!have_order) return corrupt_data("the header has no 'fortran_order'");
    if (!have_shape) return corrupt_data("the header has no 'shape'");
    return Status::ok();
  }

 private:
  char peek() const { return position_ < text_.size() ? text_[position_] : '\0'; }
  void skip_space() {
    while (position_ < text_.size() && std::strchr(" \t\r\n", text_[position_]) != nullptr) ++position_;
  }
  Status syntax(std::string_view expected) const {
    return corrupt_data("the header dict is malformed at byte {}: expected {}", position_, expected);
  }
  static Status duplicate(const std::string& key) { return corrupt_data("the header has the key '{}' twice", key); }
  Status expect(char c) {
    skip_space();
    if (peek() != c) return syntax(fmt::format("'{}'", c));
    ++position_;
    return Status::ok();
  }

  Status parse_string(std::string& out) {
    skip_space();
    const char quote = peek();
    if (quote != '\'' && quote != '"') return syntax("a quoted string");
    const size_t end = text_.find(quote, position_ + 1);
    if (end == std::string_view::npos) return syntax("a closing quote");
    out.assign(text_.substr(position_ + 1, end - position_ - 1));
    if (out.find('\\') != std::string::npos) return corrupt_data("the header has a string with escapes: '{}'", out);
    position_ = end + 1;
    return Status::ok();
  }

  Status parse_bool(bool& out) {
    skip_space();
    for (const auto& [word, value] : {std::pair<std::string_view, bool>{"True", true}, {"False", false}}) {
      if (text_.substr(position_, word.size()) == word) {
        position_ += word.size();
        out = value;
        return Status::ok();
      }
    }
    return syntax("'fortran_order' to be True or False");
  }

  // "(2, 3)", "(3,)" or "()"; "(3)" is an int in Python, not a tuple, and numpy rejects it too.
  Status parse_shape(Dims& shape) {
    TO_RETURN_IF_ERROR(expect('('));
    std::vector<int64_t> dims;
    bool trailing_comma = false;
    while (true) {
      skip_space();
      if (peek() == ')') break;
      if (dims.size() == kMaxNumpyDims) return corrupt_data("the header's shape has too many dimensions");
      int64_t value = 0;
      TO_RETURN_IF_ERROR(parse_dimension(value));
      dims.push_back(value);
      skip_space();
      trailing_comma = peek() == ',';
      if (trailing_comma) ++position_;
      else if (peek() != ')') return syntax("',' or ')' in 'shape'");
    }
    ++position_;
    if (dims.size() == 1 && !trailing_comma) return corrupt_data("the header's 'shape' is not a tuple");
    shape = Dims(std::move(dims));
    return Status::ok();
  }

  Status parse_dimension(int64_t& out) {
    const size_t start = position_;
    int64_t value = 0;
    while (position_ < text_.size() && text_[position_] >= '0' && text_[position_] <= '9') {
      const auto next = checked_mul(value, 10);
      const auto sum = next ? checked_add(*next, text_[position_] - '0') : std::nullopt;
      if (!sum) return corrupt_data("the header's shape has a dimension beyond the int64 range");
      value = *sum;
      ++position_;
    }
    if (position_ == start) return syntax("a non-negative integer in 'shape'");
    if (peek() == 'L') ++position_;  // Python 2 long literals, written by old numpy versions
    out = value;
    return Status::ok();
  }

  std::string_view text_;
  size_t position_ = 0;
};

uint32_t read_le(const uint8_t* bytes, size_t count) {
  uint32_t value = 0;
  for (size_t i = count; i-- > 0;) value = value << 8 | bytes[i];
  return value;
}

void swap_bytes(uint8_t* data, size_t element_size, size_t count) {
  for (size_t i = 0; i < count; ++i, data += element_size) std::reverse(data, data + element_size);
}

}  // namespace

Result<size_t> npy_header_size(const uint8_t* prefix, size_t size) {
  if (size < kMagicSize + 2 || std::memcmp(prefix, kMagic, kMagicSize) != 0)
    return corrupt_data("not an .npy file (the magic string \\x93NUMPY is missing)");
  const int major = prefix[6], minor = prefix[7];
  if ((major < 1 || major > 3) || minor != 0)
    return unsupported("npy format version {}.{} is not supported (1.0, 2.0 and 3.0 are)", major, minor);
  const size_t length_bytes = major == 1 ? 2 : 4;
  if (size < kMagicSize + 2 + length_bytes) return corrupt_data("the file ends inside the header length");
  const size_t length = read_le(prefix + 8, length_bytes);
  if (length > kMaxNpyHeaderSize)
    return corrupt_data("the header length {} exceeds the limit of {} bytes", length, kMaxNpyHeaderSize);
  return kMagicSize + 2 + length_bytes + length;
}

Result<NpyHeader> parse_npy_header(const uint8_t* data, size_t size) {
  TO_ASSIGN_OR_RETURN(size_t header_size, npy_header_size(data, size));
  if (header_size > size)
    return corrupt_data("the header length runs past the end of the data ({} of {} header bytes present)", size,
                        header_size);
  const size_t dict_start = data[6] == 1 ? 10 : 12;
  const std::string_view dict(reinterpret_cast<const char*>(data + dict_start), header_size - dict_start);
  // Versions 1.0 and 2.0 are latin-1, 3.0 UTF-8; everything numpy puts in the dict is ASCII.
  NpyHeader header;
  TO_RETURN_IF_ERROR(DictParser(dict).parse(header));
  header.header_size = header_size;
  auto bytes = header.shape.byte_size(header.dtype);
  if (!bytes.is_ok())
    return corrupt_data("the shape {} is too large: {}", header.shape.to_string(), bytes.status().message());
  header.data_size = static_cast<size_t>(*bytes);
  return header;
}

Status normalize_npy_payload(const NpyHeader& header, HostArray& array) {
  const size_t element_size = data_type_size(header.dtype);
  if (header.byte_swapped)
    swap_bytes(static_cast<uint8_t*>(array.data()), element_size, static_cast<size_t>(array.element_count()));
  if (!header.fortran_order || header.shape.rank() < 2 || array.element_count() == 0) return Status::ok();

  // Fortran order: the first index varies fastest. Walk the C-order destination with an
  // odometer while tracking the matching source offset.
  TO_ASSIGN_OR_RETURN(HostArray transposed, HostArray::zeros(header.dtype, header.shape));
  const size_t rank = header.shape.rank();
  std::vector<size_t> source_stride(rank), index(rank, 0);
  size_t stride = element_size;
  for (size_t axis = 0; axis < rank; ++axis) {
    source_stride[axis] = stride;
    stride *= static_cast<size_t>(header.shape[axis]);
  }
  const auto* source = static_cast<const uint8_t*>(array.data());
  auto* destination = static_cast<uint8_t*>(transposed.data());
  size_t offset = 0;
  for (int64_t i = 0; i < array.element_count(); ++i, destination += element_size) {
    std::memcpy(destination, source + offset, element_size);
    for (size_t axis = rank; axis-- > 0;) {
      offset += source_stride[axis];
      if (++index[axis] < static_cast<size_t>(header.shape[axis])) break;
      offset -= source_stride[axis] * index[axis];
      index[axis] = 0;
    }
  }
  array = std::move(transposed);
  return Status::ok();
}

std::string format_npy_header(DataType dtype, const Dims& shape) {
  std::string shape_text = "(";
  for (size_t i = 0; i < shape.rank(); ++i) shape_text += fmt::format("{}{}", i == 0 ? "" : ", ", shape[i]);
  shape_text += shape.rank() == 1 ? ",)" : ")";
  std::string dict =
      fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}", descriptor_of(dtype), shape_text);
  // Pad with spaces so that magic + version + length + dict + newline is a multiple of 64.
  constexpr size_t kAlignment = 64;
  const auto padded_size = [&](size_t prefix) {
    return dict.size() + 1 + (kAlignment - (prefix + dict.size() + 1) % kAlignment) % kAlignment;
  };
  const bool version1 = padded_size(10) <= 65535;
  const size_t prefix = version1 ? 10 : 12;
  dict.append(padded_size(prefix) - dict.size() - 1, ' ');
  dict += '\n';
  std::string header(kMagic, kMagicSize);
  header += static_cast<char>(version1 ? 1 : 2);
  header += '\0';
  const size_t length = dict.size();
  for (size_t i = 0; i < prefix - 8; ++i) header += static_cast<char>((length >> (8 * i)) & 0xFF);
  return header + dict;
}

}  // namespace tensoracle
