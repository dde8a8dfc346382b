#include "io/safetensors_header.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <new>
#include <nlohmann/json.hpp>
#include <string_view>

#include "core/errors.h"
#include "core/quoted.h"

namespace tensoracle {
namespace {

// The header's schema is fixed and shallow, so a SAX handler checks it while parsing: no DOM is
// built (opening a checkpoint with many thousand tensors stays fast), every unexpected value is
// reported at once with the tensor and field it belongs to, and nesting beyond the schema's three
// levels stops the parse immediately.
class HeaderHandler {
 public:
  using json = nlohmann::json;

  explicit HeaderHandler(SafetensorsLayout& layout) : layout_(layout) {}

  // The first schema violation, empty while there is none.
  const std::string& error() const { return error_; }

  bool null() { return unexpected("null"); }
  bool boolean(bool) { return unexpected("boolean"); }
  bool number_float(json::number_float_t, const json::string_t&) { return unexpected("a non-integer number"); }
  bool binary(json::binary_t&) { return unexpected("binary"); }

  bool number_integer(json::number_integer_t value) {
    // nlohmann reports non-negative integers through number_unsigned; this one is negative.
    if (where_ == Where::kArray) return fail("tensor '{}': field '{}' holds the negative value {}", name_, field_name(), value);
    return unexpected("a negative number");
  }

  bool number_unsigned(json::number_unsigned_t value) {
    if (where_ != Where::kArray) return unexpected("a number");
    if (field_ == Field::kShape) {
      if (value > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        return fail("tensor '{}': field 'shape' holds the dimension {}, beyond the int64 range", name_, value);
      shape_.push_back(static_cast<int64_t>(value));
    } else {
      if (offsets_.size() == 2) return fail("tensor '{}': field 'data_offsets' must be [begin, end], got more than 2 values", name_);
      offsets_.push_back(value);
    }
    return true;
  }

  bool string(json::string_t& value) {
    if (has_nul(value)) return fail("the string {} holds a NUL byte (\\u0000)", quote(value));
    if (where_ == Where::kMetadata) {
      if (!layout_.metadata.emplace(name_, std::move(value)).second)
        return fail("'__metadata__' has the key '{}' twice", name_);
      return true;
    }
    if (where_ == Where::kTensor && field_ == Field::kDtype) {
      auto dtype = safetensors_dtype_from_name(value);
      if (!dtype.is_ok()) return fail("tensor '{}': field 'dtype': {}", name_, dtype.status().message());
      tensor_.dtype = *dtype;
      return true;
    }
    return unexpected("a string");
  }

  bool start_object(std::size_t) {
    switch (where_) {
      case Where::kStart:
        where_ = Where::kRoot;
        return true;
      case Where::kRoot:
        if (name_ == "__metadata__") {
          if (seen_metadata_) return fail("'__metadata__' appears twice");
          seen_metadata_ = true;
          where_ = Where::kMetadata;
        } else {
          tensor_ = SafetensorsTensorInfo{};
          tensor_.name = name_;
          seen_fields_ = 0;
          where_ = Where::kTensor;
        }
        return true;
      default:
        return unexpected("an object");
    }
  }

  bool end_object() {
    if (where_ == Where::kMetadata) {
      where_ = Where::kRoot;
    } else if (where_ == Where::kTensor) {
      for (Field field : {Field::kDtype, Field::kShape, Field::kDataOffsets})
        if ((seen_fields_ & bit(field)) == 0) return fail("tensor '{}': missing field '{}'", name_, field_name(field));
      tensor_.shape = Dims(std::move(shape_));
      tensor_.begin = offsets_[0];
      tensor_.end = offsets_[1];
      layout_.tensors.push_back(std::move(tensor_));
      where_ = Where::kRoot;
    } else {
      where_ = Where::kDone;  // the root closed
    }
    return true;
  }

  bool start_array(std::size_t) {
    if (where_ == Where::kTensor && (field_ == Field::kShape || field_ == Field::kDataOffsets)) {
      if (field_ == Field::kShape) shape_.clear();
      else offsets_.clear();
      where_ = Where::kArray;
      return true;
    }
    return unexpected("an array");
  }

  bool end_array() {
    if (field_ == Field::kDataOffsets && offsets_.size() != 2)
      return fail("tensor '{}': field 'data_offsets' must be [begin, end], got {} values", name_, offsets_.size());
    where_ = Where::kTensor;
    return true;
  }

  bool key(json::string_t& key) {
    // Tensor names become names in messages, maps and engines: a NUL would cut them short.
    if (has_nul(key)) return fail("the name {} holds a NUL byte (\\u0000)", quote(key));
    if (where_ != Where::kTensor) {
      name_ = std::move(key);  // a tensor name, "__metadata__", or a metadata key
      return true;
    }
    if (key == "dtype") field_ = Field::kDtype;
    else if (key == "shape") field_ = Field::kShape;
    else if (key == "data_offsets") field_ = Field::kDataOffsets;
    else return fail("tensor '{}': unknown field '{}' (expected dtype, shape, data_offsets)", name_, key);
    if ((seen_fields_ & bit(field_)) != 0) return fail("tensor '{}': field '{}' appears twice", name_, key);
    seen_fields_ |= bit(field_);
    return true;
  }

  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& error) {
    // nlohmann's messages include the byte position and the offending token.
    if (error_.empty()) error_ = fmt::format("the header is not valid JSON: {}", error.what());
    return false;
  }

 private:
  enum class Where { kStart, kRoot, kMetadata, kTensor, kArray, kDone };
  enum class Field { kDtype, kShape, kDataOffsets };

  static unsigned bit(Field field) { return 1u << static_cast<unsigned>(field); }
  static std::string_view field_name(Field field) {
    switch (field) {
      case Field::kDtype: return "dtype";
      case Field::kShape: return "shape";
      case Field::kDataOffsets: return "data_offsets";
    }
    return "?";
  }
  std::string_view field_name() const { return field_name(field_); }

  template <typename... Args>
  bool fail(fmt::format_string<Args...> format, Args&&... args) {
    error_ = fmt::format(format, std::forward<Args>(args)...);
    return false;
  }

  // A value the schema does not allow at this place.
  bool unexpected(std::string_view what) {
    switch (where_) {
      case Where::kStart: return fail("the header must be a JSON object, got {}", what);
      case Where::kRoot:
        if (name_ == "__metadata__") return fail("'__metadata__' must be an object of strings, got {}", what);
        return fail("tensor '{}': the entry must be an object, got {}", name_, what);
      case Where::kMetadata: return fail("'__metadata__': the value of '{}' must be a string, got {}", name_, what);
      case Where::kTensor:
        if (field_ == Field::kDtype) return fail("tensor '{}': field 'dtype' must be a string, got {}", name_, what);
        return fail("tensor '{}': field '{}' must be an array of non-negative integers, got {}", name_, field_name(), what);
      case Where::kArray:
        return fail("tensor '{}': field '{}' must hold non-negative integers, got {}", name_, field_name(), what);
      case Where::kDone: break;
    }
    return fail("unexpected {} after the header object", what);
  }

  SafetensorsLayout& layout_;
  Where where_ = Where::kStart;
  std::string name_;
  Field field_ = Field::kDtype;
  unsigned seen_fields_ = 0;
  bool seen_metadata_ = false;
  SafetensorsTensorInfo tensor_;
  std::vector<int64_t> shape_;
  std::vector<uint64_t> offsets_;
  std::string error_;
};

uint64_t read_le64(const uint8_t* bytes) {
  uint64_t value = 0;
  for (int i = 7; i >= 0; --i) value = value << 8 | bytes[i];
  return value;
}

// Checks one tensor's own fields: its byte range is consistent with dtype and shape and lies
// inside the data region.
Status check_tensor(const SafetensorsTensorInfo& tensor, uint64_t data_size) {
  if (tensor.end < tensor.begin)
    return corrupt_data("tensor '{}': field 'data_offsets' [{}, {}] ends before it begins", tensor.name,
                        tensor.begin, tensor.end);
  int64_t elements = 1;
  for (size_t i = 0; i < tensor.shape.rank(); ++i) {
    const auto product = checked_mul(elements, tensor.shape[i]);
    if (!product)
      return corrupt_data("tensor '{}': field 'shape' {} has more elements than fit in int64", tensor.name,
                          tensor.shape.to_string());
    elements = *product;
  }
  const auto bytes = checked_mul(elements, static_cast<int64_t>(data_type_size(tensor.dtype)));
  if (!bytes)
    return corrupt_data("tensor '{}': field 'shape' {} of {} needs more bytes than fit in int64", tensor.name,
                        tensor.shape.to_string(), safetensors_dtype_name(tensor.dtype));
  if (tensor.end - tensor.begin != static_cast<uint64_t>(*bytes))
    return corrupt_data("tensor '{}': field 'data_offsets' [{}, {}] spans {} bytes, but shape {} of {} needs {}",
                        tensor.name, tensor.begin, tensor.end, tensor.end - tensor.begin, tensor.shape.to_string(),
                        safetensors_dtype_name(tensor.dtype), *bytes);
  if (tensor.end > data_size)
    return corrupt_data("tensor '{}': field 'data_offsets' [{}, {}] runs past the end of the data region ({} bytes)",
                        tensor.name, tensor.begin, tensor.end, data_size);
  return Status::ok();
}

// The tensors, in offset order, must tile the data region exactly: no overlap, no gap, nothing
// after the last tensor (the reference implementation's rule).
Status check_coverage(const std::vector<SafetensorsTensorInfo>& tensors, uint64_t data_size) {
  uint64_t cursor = 0;
  const SafetensorsTensorInfo* previous = nullptr;
  for (const auto& tensor : tensors) {
    if (tensor.begin < cursor)
      return corrupt_data("tensor '{}': field 'data_offsets' [{}, {}] overlaps tensor '{}' [{}, {}]", tensor.name,
                          tensor.begin, tensor.end, previous->name, previous->begin, previous->end);
    if (tensor.begin > cursor)
      return corrupt_data("tensor '{}': field 'data_offsets' [{}, {}] leaves the data bytes [{}, {}) unused "
                          "(tensors must cover the data region without gaps)",
                          tensor.name, tensor.begin, tensor.end, cursor, tensor.begin);
    cursor = tensor.end;
    if (tensor.end > tensor.begin) previous = &tensor;
  }
  if (cursor != data_size)
    return corrupt_data("the data region has {} bytes but its tensors cover only the first {}", data_size, cursor);
  return Status::ok();
}

Status parse_layout(const uint8_t* data, size_t size, SafetensorsLayout& layout) {
  if (size < 8)
    return corrupt_data("the file has {} bytes, fewer than the 8-byte header length that starts a safetensors file",
                        size);
  const uint64_t header_size = read_le64(data);
  if (header_size > kMaxSafetensorsHeaderSize)
    return corrupt_data("the header length {} exceeds the limit of {} bytes", header_size, kMaxSafetensorsHeaderSize);
  if (header_size > size - 8)
    return corrupt_data("the header length {} runs past the end of the file ({} bytes)", header_size, size);
  const char* header = reinterpret_cast<const char*>(data + 8);
  if (header_size == 0 || header[0] != '{') return corrupt_data("the header does not start with '{{'");

  // nlohmann's lexer takes a NUL byte for the end of input and would ignore what follows; valid
  // JSON never contains one (control characters in strings must be escaped).
  if (const void* nul = std::memchr(header, 0, header_size); nul != nullptr)
    return corrupt_data("the header is not valid JSON: a NUL byte at header offset {}",
                        static_cast<const char*>(nul) - header);
  HeaderHandler handler(layout);
  nlohmann::json::sax_parse(header, header + header_size, &handler, nlohmann::json::input_format_t::json,
                            /*strict=*/true);
  if (!handler.error().empty()) return corrupt_data("{}", handler.error());

  layout.data_offset = 8 + header_size;
  const uint64_t data_size = size - layout.data_offset;
  for (const auto& tensor : layout.tensors) TO_RETURN_IF_ERROR(check_tensor(tensor, data_size));

  if (layout.tensors.size() > std::numeric_limits<uint32_t>::max())
    return corrupt_data("the header lists {} tensors, too many", layout.tensors.size());
  std::sort(layout.tensors.begin(), layout.tensors.end(), [](const auto& a, const auto& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  layout.by_name.resize(layout.tensors.size());
  for (uint32_t i = 0; i < layout.by_name.size(); ++i) layout.by_name[i] = i;
  const auto& tensors = layout.tensors;
  std::sort(layout.by_name.begin(), layout.by_name.end(),
            [&](uint32_t a, uint32_t b) { return tensors[a].name < tensors[b].name; });
  for (size_t i = 1; i < layout.by_name.size(); ++i)
    if (tensors[layout.by_name[i]].name == tensors[layout.by_name[i - 1]].name)
      return corrupt_data("tensor '{}' appears twice in the header", tensors[layout.by_name[i]].name);

  return check_coverage(layout.tensors, data_size);
}

}  // namespace

Result<SafetensorsLayout> parse_safetensors(const uint8_t* data, size_t size, const std::string& source) {
  SafetensorsLayout layout;
  Status status;
  try {
    status = parse_layout(data, size, layout);
  } catch (const std::bad_alloc&) {
    status = make_error(StatusCode::kFailedPrecondition, "out of memory parsing the header");
  }
  if (!status.is_ok()) return status.with_context(fmt::format("'{}'", source));
  return layout;
}

}  // namespace tensoracle
