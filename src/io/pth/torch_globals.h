// The torch side of the restricted unpickler: which globals exist, what REDUCE of each one
// builds, and what a persistent id means. Nothing here is generic pickle machinery.
#pragma once

#include <string_view>

#include "io/pth/pickle.h"

namespace tensoracle::pth {

// Allocates objects in an Unpickled under the object-count limit.
class ObjectArena {
 public:
  ObjectArena(Unpickled& out, size_t max_objects) : out_(out), max_objects_(max_objects) {}
  Result<PickleObject*> make(ObjectKind kind);
  StorageRef* make_storage() { return &out_.storages.emplace_back(); }
  TensorRef* make_tensor() { return &out_.tensors.emplace_back(); }

 private:
  Unpickled& out_;
  size_t max_objects_;
};

// Fills `global` (kind kGlobal) for a whitelisted module.name; false when not whitelisted.
bool resolve_global(std::string_view module, std::string_view name, PickleObject& global);

// REDUCE: `callable(*args)`. Only the tensor builders and OrderedDict may be called.
Result<PickleObject*> apply_global(const PickleObject& callable, const PickleObject& args, ObjectArena& arena,
                                   const PthLimits& limits);

// BINPERSID: the storage a torch persistent id names.
Result<PickleObject*> persistent_load(const PickleObject& pid, ObjectArena& arena);

}  // namespace tensoracle::pth
