// The content hash of the weights a graph uses.
#include <algorithm>

#include "core/errors.h"
#include "tensoracle/cache.h"
#include "tensoracle/hashing.h"

namespace tensoracle {

Result<std::string> weights_content_hash(const Weights& weights, const std::vector<std::string>& names,
                                         FileHashCache* sidecar) {
  std::vector<std::string> sorted = names;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());

  std::map<std::string, std::string> cached;  // tensor -> sha256 of its bytes, from the sidecar
  if (sidecar != nullptr) {
    for (const std::string& file : weights.files()) {
      TO_ASSIGN_OR_RETURN(auto digests, sidecar->tensor_sha256s(file));
      cached.merge(digests);
    }
  }
  Sha256 hash;
  for (const std::string& name : sorted) {
    TO_ASSIGN_OR_RETURN(const SafetensorsTensorInfo info, weights.info(name));
    std::string digest;
    if (const auto found = cached.find(name); found != cached.end()) {
      digest = found->second;
    } else {
      TO_ASSIGN_OR_RETURN(const ArrayView view, weights.view(name));
      digest = sha256_hex(view.data, info.end - info.begin);
    }
    // NUL separators: no name, type or shape text contains one, so fields cannot run together.
    std::string record = name;
    for (const std::string& field : {std::string(data_type_name(info.dtype)), info.shape.to_string(), digest}) {
      record.push_back('\0');
      record += field;
    }
    record.push_back('\n');
    hash.update(record);
  }
  return hash.finish_hex();
}

}  // namespace tensoracle
