// Checkpoints built here, byte by byte, that a hostile author could hand to the converter.
#pragma once

#include <zip.h>

#include <map>
#include <string>

#include "host/pth/pickle_builder.h"

namespace tensoracle::pth::hostile {

// Writes a zip with `entries` (name -> bytes), stored uncompressed like torch.save. False when
// libzip refused.
inline bool write_zip(const std::string& path, const std::map<std::string, std::string>& entries) {
  int error = 0;
  zip_t* zip = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &error);
  if (zip == nullptr) return false;
  for (const auto& [name, bytes] : entries) {
    zip_source_t* source = zip_source_buffer(zip, bytes.data(), bytes.size(), 0);
    const zip_int64_t index = zip_file_add(zip, name.c_str(), source, ZIP_FL_ENC_UTF_8);
    if (index < 0 || zip_set_file_compression(zip, static_cast<zip_uint64_t>(index), ZIP_CM_STORE, 0) != 0) {
      zip_discard(zip);
      return false;
    }
  }
  return zip_close(zip) == 0;
}

// A torch-layout checkpoint: archive/data.pkl = proto 2 + `object` + STOP, plus storages.
inline bool write_checkpoint(const std::string& path, const std::string& object,
                             const std::map<std::string, std::string>& storages) {
  using namespace pickle_ops;  // NOLINT: the opcode spellings
  std::map<std::string, std::string> entries = {{"archive/data.pkl", proto(2) + object + stop()},
                                                {"archive/version", "3\n"},
                                                {"archive/byteorder", "little"}};
  for (const auto& [key, bytes] : storages) entries["archive/data/" + key] = bytes;
  return write_zip(path, entries);
}

// A "stride-0 bomb": `tensors` fp32 tensors t0, t1, ... of `elements` elements each, all views of
// one 4-byte storage with stride 0 (what torch's expand() saves). The file stays a few hundred
// bytes per tensor; converting it writes tensors * elements * 4 bytes.
inline bool write_stride0_bomb(const std::string& path, int tensors, int32_t elements) {
  using namespace pickle_ops;  // NOLINT
  std::string dict = empty_dict() + mark();
  for (int i = 0; i < tensors; ++i) {
    const std::string shape = mark() + binint(elements) + tuple();
    const std::string stride = mark() + binint1(0) + tuple();
    dict += str("t" + std::to_string(i)) + tensor_v2(storage("FloatStorage", "0", 1), 0, shape, stride);
  }
  dict += setitems();
  return write_checkpoint(path, dict, {{"0", std::string("\0\0\x80\x3f", 4)}});
}

}  // namespace tensoracle::pth::hostile
