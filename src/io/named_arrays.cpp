// read_named_arrays: one entry point for the array files a user hands to compare and friends.
#include <string_view>

#include "core/errors.h"
#include "tensoracle/npy.h"
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

}  // namespace

Result<NamedArrays> read_named_arrays(const std::string& path) {
  if (has_extension(path, ".npy")) {
    TO_ASSIGN_OR_RETURN(HostArray array, read_npy(path));
    NamedArrays arrays;
    arrays.emplace(stem_of(path, ".npy"), std::move(array));
    return arrays;
  }
  if (has_extension(path, ".npz")) return read_npz(path);
  if (has_extension(path, ".safetensors")) {
    TO_ASSIGN_OR_RETURN(auto file, SafetensorsFile::open(path));
    NamedArrays arrays;
    for (const auto& info : file.tensors()) {
      TO_ASSIGN_OR_RETURN(ArrayView view, file.view(info.name));
      TO_ASSIGN_OR_RETURN(HostArray copy, HostArray::copy_of(view));
      arrays.emplace(info.name, std::move(copy));
    }
    return arrays;
  }
  return invalid_argument("cannot read arrays from '{}': expected a .npy, .npz or .safetensors file", path);
}

}  // namespace tensoracle
