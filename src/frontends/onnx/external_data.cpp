// ExternalDataFiles (external_data.h).
#include "frontends/onnx/external_data.h"

#include <algorithm>
#include <charconv>
#include <filesystem>

#include "core/errors.h"

namespace tensoracle::onnx_import {
namespace {

namespace fs = std::filesystem;

// An external_data value that is a non-negative decimal integer.
Result<int64_t> parse_count(const std::string& text, const std::string& key, const std::string& what) {
  int64_t value = -1;
  const char* end = text.data() + text.size();
  const auto [ptr, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || error != std::errc() || ptr != end || value < 0)
    return invalid_argument("{}: external_data '{}' is '{}'; expected a non-negative integer", what, key, text);
  return value;
}

// Why `location` may not be opened relative to the model's directory, or "".
std::string location_problem(const std::string& location) {
  if (location.empty()) return "the location is empty";
  if (location.find('\0') != std::string::npos) return "the location holds a NUL byte";
  const fs::path path(location);
  if (path.is_absolute() || path.has_root_name() || path.has_root_directory())
    return "an absolute path (locations are relative to the model's directory)";
  for (const fs::path& part : path)
    if (part == "..") return "a '..' component leaves the model's directory";
  return "";
}

}  // namespace

ExternalDataFiles::ExternalDataFiles(const std::string& model_path) {
  const fs::path dir = fs::path(model_path).parent_path();
  model_dir_ = dir.empty() ? "." : dir.string();
}

Result<std::shared_ptr<const MappedFile>> ExternalDataFiles::open(const std::string& location, const std::string& what) {
  if (const std::string problem = location_problem(location); !problem.empty())
    return invalid_argument("{}: external data location '{}' is refused: {}", what, location, problem);
  // Symbolic links are resolved in every component; the result must stay under the directory.
  std::error_code error;
  const fs::path root = fs::canonical(model_dir_, error);
  if (error) return io_error("{}: cannot resolve the model's directory '{}': {}", what, model_dir_, error.message());
  const fs::path file = fs::path(model_dir_) / location;
  if (!fs::exists(file, error))
    return not_found("{}: external data file '{}' does not exist (looked for '{}')", what, location, file.string());
  const fs::path resolved = fs::canonical(file, error);
  if (error) return io_error("{}: cannot resolve external data file '{}': {}", what, location, error.message());
  const auto mismatch = std::mismatch(root.begin(), root.end(), resolved.begin(), resolved.end());
  if (mismatch.first != root.end() || resolved == root)
    return invalid_argument("{}: external data file '{}' is refused: a symbolic link leads outside the model's "
                            "directory (to '{}')",
                            what, location, resolved.string());
  const auto cached = files_.find(resolved.string());
  if (cached != files_.end()) return cached->second;
  Result<std::shared_ptr<const MappedFile>> mapped = MappedFile::open(resolved.string());
  if (!mapped.is_ok()) return mapped.status().with_context(fmt::format("{}: external data file '{}'", what, location));
  files_.emplace(resolved.string(), *mapped);
  return mapped;
}

Result<ConstantValue> ExternalDataFiles::read(const onnx::TensorProto& tensor, DataType dtype, const Dims& shape,
                                              int64_t bytes, const std::string& what) {
  if (tensor.has_raw_data() || tensor.float_data_size() > 0 || tensor.int32_data_size() > 0 ||
      tensor.int64_data_size() > 0 || tensor.double_data_size() > 0 || tensor.uint64_data_size() > 0)
    return invalid_argument("{}: its data location is EXTERNAL but it also holds data in the model", what);
  std::string location;
  int64_t offset = 0;
  int64_t length = -1;
  for (const onnx::StringStringEntryProto& entry : tensor.external_data()) {
    const std::string& text = entry.value();
    if (entry.key() == "location") {
      location = text;
    } else if (entry.key() == "offset") {
      TO_ASSIGN_OR_RETURN(offset, parse_count(text, "offset", what));
    } else if (entry.key() == "length") {
      TO_ASSIGN_OR_RETURN(length, parse_count(text, "length", what));
    } else if (entry.key() != "checksum") {
      return unsupported("{}: external_data key '{}' is not supported (location, offset, length, checksum are)", what,
                         entry.key());
    }
  }
  if (location.empty()) return invalid_argument("{}: its data location is EXTERNAL but external_data has no 'location'", what);
  TO_ASSIGN_OR_RETURN(const std::shared_ptr<const MappedFile> file, open(location, what));
  const int64_t size = static_cast<int64_t>(file->size());
  if (offset > size)
    return invalid_argument("{}: external data offset {} is past the end of '{}' ({} bytes)", what, offset, location, size);
  if (length < 0) length = size - offset;
  if (length > size - offset)
    return invalid_argument("{}: external data length {} at offset {} runs past the end of '{}' ({} bytes)", what,
                            length, offset, location, size);
  if (length != bytes)
    return invalid_argument("{}: external data length {} in '{}', but {} of {} need {} bytes", what, length, location,
                            shape.to_string(), data_type_name(dtype), bytes);
  return ConstantValue{ArrayView{dtype, shape, file->data() + offset}, file};
}

}  // namespace tensoracle::onnx_import
