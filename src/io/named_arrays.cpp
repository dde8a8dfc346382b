// read_named_arrays and write_named_arrays: one entry point for the array files a user hands to
// run, compare and friends, chosen by extension.
#include <string_view>
#include <vector>

#include "core/errors.h"
#include "io/array_read_budget.h"
#include "tensoracle/npy.h"
#include "tensoracle/output_files.h"
#include "tensoracle/safetensors.h"

namespace tensoracle {
namespace {

bool has_extension(const std::string& path, std::string_view extension) {
  return path.size() > extension.size() &&
         path.compare(path.size() - extension.size(), extension.size(), extension) == 0;
}

std::string stem_of(const std::string& path, std::string_view extension) {
  const size_t slash = path.find_last_of('/');
  const size_t start = slash == std::string::npos ? 0 : slash + 1;
  return path.substr(start, path.size() - extension.size() - start);
}

Result<NamedArrays> read_safetensors_arrays(const std::string& path, const ArrayReadOptions& options) {
  TO_ASSIGN_OR_RETURN(auto file, SafetensorsFile::open(path));
  ArrayReadBudget budget(path, options, file.file_size());
  NamedArrays arrays;
  std::vector<std::string> names;
  for (const auto& info : file.tensors()) {
    names.push_back(info.name);
    if (!budget.wanted(info.name)) continue;
    TO_RETURN_IF_ERROR(budget.admit(info.name, info.dtype, info.shape, info.end - info.begin)
                           .with_context(fmt::format("'{}'", path)));
    TO_ASSIGN_OR_RETURN(ArrayView view, file.view(info.name));
    TO_ASSIGN_OR_RETURN(HostArray copy, HostArray::copy_of(view));
    arrays.emplace(info.name, std::move(copy));
  }
  TO_RETURN_IF_ERROR(budget.check_complete(names));
  return arrays;
}

// A .npy holds one array, named after the file.
Result<NamedArrays> read_npy_array(const std::string& path, const ArrayReadOptions& options) {
  const std::string name = stem_of(path, ".npy");
  NamedArrays arrays;
  if (options.exclude.count(name) != 0 || (options.only && options.only->count(name) == 0)) {
    ArrayReadBudget budget(path, options, 0);
    TO_RETURN_IF_ERROR(budget.check_complete({name}));
    return arrays;
  }
  TO_ASSIGN_OR_RETURN(HostArray array, read_npy(path, options));
  arrays.emplace(name, std::move(array));
  return arrays;
}

constexpr std::string_view kSupportedOutputs =
    "supported: .npz and .safetensors (any number of arrays), .npy (exactly one array)";

}  // namespace

Result<NamedArrays> read_named_arrays(const std::string& path, const ArrayReadOptions& options) {
  if (has_extension(path, ".npy")) return read_npy_array(path, options);
  if (has_extension(path, ".npz")) return read_npz(path, options);
  if (has_extension(path, ".safetensors")) return read_safetensors_arrays(path, options);
  return invalid_argument("cannot read arrays from '{}': expected a .npy, .npz or .safetensors file", path);
}

Status check_array_output_path(const std::string& path, size_t count) {
  if (has_extension(path, ".npz") || has_extension(path, ".safetensors")) return Status::ok();
  if (has_extension(path, ".npy")) {
    if (count == 1) return Status::ok();
    return invalid_argument("cannot write {} arrays to '{}': a .npy file holds exactly one array ({})", count, path,
                            kSupportedOutputs);
  }
  return invalid_argument("cannot write arrays to '{}': its extension names no array format tensoracle writes ({})",
                          path, kSupportedOutputs);
}

Status write_named_arrays(const std::string& path, const NamedArrayViews& arrays) {
  TO_RETURN_IF_ERROR(check_array_output_path(path, arrays.size()));
  if (has_extension(path, ".safetensors")) return write_safetensors(path, arrays);
  if (has_extension(path, ".npy")) return write_npy(path, arrays.begin()->second);
  return write_npz(path, arrays);
}

}  // namespace tensoracle
