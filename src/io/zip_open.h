// Opening zip archives (.npz, wheels) for reading with libzip.
#pragma once

#include <zip.h>

#include <string>

namespace tensoracle {

// zip_open(path, ZIP_RDONLY | ZIP_CHECKCONS). An archive that fails those checks only because two
// entries share a name (libzip's "File already exists") is opened without them instead, so that
// the caller, which reads every entry name, can report the duplicate by name. Null with
// `*error_code` set (a ZIP_ER_* code) when it cannot be opened.
zip_t* open_zip_read_only(const std::string& path, int* error_code);

}  // namespace tensoracle
