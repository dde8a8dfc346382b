// The engine cache store (include/tensoracle/cache.h): list / info / verify / prune /
// clear, as `tensoracle cache` does. tensoracle.cache (python/tensoracle/cache.py) wraps it.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>

#include "arrays.h"
#include "bindings.h"
#include "errors.h"
#include "tensoracle/cache.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace tensoracle::python {
namespace {

// A size in bytes, or a text such as "10G" (parse_byte_size).
uint64_t byte_size_from_python(nb::handle value) {
  if (nb::isinstance<nb::str>(value)) return unwrap(parse_byte_size(nb::cast<std::string>(value)));
  const int64_t bytes = nb::cast<int64_t>(value);
  if (bytes < 0) fail("size: " + std::to_string(bytes) + " is negative");
  return static_cast<uint64_t>(bytes);
}

CacheStore make_store(nb::handle directory, nb::handle max_size) {
  CacheOptions options;
  if (!directory.is_none()) options.directory = path_from_python(directory);
  if (!max_size.is_none()) options.max_size_bytes = byte_size_from_python(max_size);
  return CacheStore(options);
}

}  // namespace

void bind_cache(nb::module_& m) {
  nb::class_<CacheEntryInfo>(m, "CacheEntry", "One cached engine.")
      .def_ro("key", &CacheEntryInfo::key)
      .def_ro("engine_name", &CacheEntryInfo::engine_name, "from the manifest; empty when it cannot be read")
      .def_ro("engine_bytes", &CacheEntryInfo::engine_bytes)
      .def_ro("manifest_bytes", &CacheEntryInfo::manifest_bytes)
      .def_ro("last_used_unix_ns", &CacheEntryInfo::last_used_unix_ns)
      .def_ro("manifest_json", &CacheEntryInfo::manifest_json, "the stored key manifest")
      .def("__repr__", [](const CacheEntryInfo& e) { return "<CacheEntry " + e.key.substr(0, 16) + " '" + e.engine_name + "'>"; });

  nb::class_<CacheProblem>(m, "CacheProblem", "A bad entry found by verify.")
      .def_ro("key", &CacheProblem::key, "the key, or the file name of a stray file")
      .def_ro("reason", &CacheProblem::reason)
      .def("__repr__", [](const CacheProblem& p) { return "<CacheProblem " + p.key + ": " + p.reason + ">"; });

  nb::class_<CachePruneResult>(m, "CachePruneResult", "What prune or clear removed.")
      .def_ro("removed_keys", &CachePruneResult::removed_keys)
      .def_ro("bytes_freed", &CachePruneResult::bytes_freed)
      .def_ro("bytes_left", &CachePruneResult::bytes_left)
      .def_ro("skipped_keys", &CachePruneResult::skipped_keys, "in use by another process (locked) at the time")
      .def("__repr__", [](const CachePruneResult& r) {
        return "<CachePruneResult removed " + std::to_string(r.removed_keys.size()) + ", freed " +
               std::to_string(r.bytes_freed) + " bytes>";
      });

  nb::class_<CacheStore>(m, "CacheStore",
                         "The engine cache in one directory (docs/cache.md). tensoracle.cache has the same operations "
                         "as functions.")
      .def("__init__", [](CacheStore* self, nb::handle directory, nb::handle max_size) {
        new (self) CacheStore(make_store(directory, max_size));
      }, "directory"_a = nb::none(), "max_size"_a = nb::none(),
           nb::sig("def __init__(self, directory: str | os.PathLike[str] | None = None, max_size: int | str | None = None) -> None"),
           "directory: default $TENSORACLE_CACHE_DIR, else $XDG_CACHE_HOME/tensoracle, else ~/.cache/tensoracle. "
           "max_size: bytes (or \"10G\") kept after a build; default $TENSORACLE_CACHE_MAX_SIZE, else 20G.")
      .def_prop_ro("directory", &CacheStore::directory)
      .def_prop_ro("max_size_bytes", &CacheStore::max_size_bytes)
      .def("list", [](const CacheStore& s) {
        nb::gil_scoped_release release;
        return unwrap(s.list());
      }, "Entries, most recently used first.")
      .def("info", [](const CacheStore& s, const std::string& key) {
        nb::gil_scoped_release release;
        return unwrap(s.info(key));
      }, "key"_a, "One entry by its key or a unique prefix of it.")
      .def("verify", [](const CacheStore& s) {
        nb::gil_scoped_release release;
        return unwrap(s.verify());
      }, "Re-checks every entry (checksum, structure, manifest vs engine vs key); the problems found, empty when all are good.")
      .def("prune", [](const CacheStore& s, nb::handle max_size) {
        const uint64_t limit = max_size.is_none() ? s.max_size_bytes() : byte_size_from_python(max_size);
        nb::gil_scoped_release release;
        return unwrap(s.prune(limit));
      }, "max_size"_a = nb::none(), nb::sig("def prune(self, max_size: int | str | None = None) -> CachePruneResult"),
           "Evicts least-recently-used entries down to max_size (default: the store's limit) and removes leftovers of "
           "interrupted writes; entries locked by another process are kept.")
      .def("clear", [](const CacheStore& s) {
        nb::gil_scoped_release release;
        return unwrap(s.clear());
      }, "Removes every entry not in use by another process.")
      .def("__repr__", [](const CacheStore& s) { return "<CacheStore '" + s.directory() + "'>"; });

  m.def("default_cache_directory", [] { return unwrap(default_cache_directory()); },
        "$TENSORACLE_CACHE_DIR, else $XDG_CACHE_HOME/tensoracle, else ~/.cache/tensoracle; raises when "
        "TENSORACLE_CACHE_DIR is set but empty");
  m.def("parse_byte_size", [](const std::string& text) { return unwrap(parse_byte_size(text)); }, "text"_a,
        "\"512M\", \"10G\", \"1.5GiB\", \"4096\" -> bytes (K/M/G/T are powers of 1024)");
}

}  // namespace tensoracle::python
