#include "io/zip_open.h"

namespace tensoracle {

zip_t* open_zip_read_only(const std::string& path, int* error_code) {
  zip_t* archive = zip_open(path.c_str(), ZIP_RDONLY | ZIP_CHECKCONS, error_code);
  if (archive == nullptr && *error_code == ZIP_ER_EXISTS) archive = zip_open(path.c_str(), ZIP_RDONLY, error_code);
  return archive;
}

}  // namespace tensoracle
