// A restricted unpickler for PyTorch state dicts: a pure data interpreter.
//
// It understands exactly the pickle opcodes (protocols 2 to 5) and the globals a torch.save'd
// state dict uses, and builds a tree of PickleObjects. It never imports or calls anything:
// "globals" are names looked up in a fixed table, and REDUCE of a whitelisted name is evaluated
// by C++ code here (an OrderedDict becomes a dict, _rebuild_tensor_v2 becomes a tensor record).
// Any other opcode or global is rejected with an error naming it and its byte offset.
//
// Every resource is bounded (UnpickleLimits): the object count, the value stack, MARK nesting and
// the memo. Strings are copied out of the input, whose size the caller bounds.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tensoracle/pth.h"
#include "tensoracle/status.h"
#include "tensoracle/types.h"

namespace tensoracle::pth {

enum class ObjectKind : uint8_t {
  kNone,
  kBool,
  kInt,
  kFloat,
  kString,
  kBytes,
  kTuple,
  kList,
  kDict,
  kGlobal,   // a whitelisted class or function (see GlobalKind)
  kStorage,  // a persistent storage reference: ('storage', class, key, location, numel)
  kTensor,   // the result of a tensor rebuild function
};

// The whitelisted globals.
enum class GlobalKind : uint8_t {
  kOrderedDict,                // collections.OrderedDict
  kRebuildTensorV2,            // torch._utils._rebuild_tensor_v2
  kRebuildTensorV3,            // torch._utils._rebuild_tensor_v3 (dtype passed explicitly)
  kRebuildParameter,           // torch._utils._rebuild_parameter
  kRebuildParameterWithState,  // torch._utils._rebuild_parameter_with_state
  kRebuildFromTypeV2,          // torch._tensor._rebuild_from_type_v2
  kTensorClass,                // torch.Tensor, torch.nn.parameter.Parameter (types, not callable)
  kStorageClass,               // torch.FloatStorage ... and torch.UntypedStorage (not callable)
  kDtype,                      // torch.float32 ... (values, not callable)
};

struct PickleObject;

// A storage reference: record `key` of the archive, `numel` elements of `dtype`. An untyped
// storage (torch.UntypedStorage) counts bytes (dtype uint8).
struct StorageRef {
  std::string key;
  std::string location;  // "cpu", "cuda:0", ... (informational: data is always read to host)
  DataType dtype = DataType::kUInt8;
  bool untyped = false;
  int64_t numel = 0;
};

// A tensor: `sizes` and `strides` in elements of `dtype`, starting `offset` elements into the
// storage. Strides are validated non-negative; bounds are checked against the record later.
struct TensorRef {
  const StorageRef* storage = nullptr;
  DataType dtype = DataType::kFloat32;
  int64_t offset = 0;
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
};

struct PickleObject {
  ObjectKind kind = ObjectKind::kNone;
  GlobalKind global = GlobalKind::kOrderedDict;  // kGlobal
  DataType dtype = DataType::kUInt8;             // kGlobal of kStorageClass / kDtype
  bool untyped_storage = false;                  // kGlobal of kStorageClass
  bool boolean = false;                          // kBool
  int64_t integer = 0;                           // kInt
  double real = 0;                               // kFloat
  std::string text;  // kString, kBytes; kGlobal: "module.name"
  std::vector<PickleObject*> items;                              // kTuple, kList
  std::vector<std::pair<PickleObject*, PickleObject*>> entries;  // kDict, in insertion order
  const StorageRef* storage = nullptr;                           // kStorage
  const TensorRef* tensor = nullptr;                             // kTensor
};

// "int", "dict", "tensor", ... for messages.
std::string_view object_kind_name(ObjectKind kind);

// The object tree of one pickle. Objects live as long as this value and never move.
struct Unpickled {
  const PickleObject* root = nullptr;
  std::deque<PickleObject> objects;
  std::deque<StorageRef> storages;
  std::deque<TensorRef> tensors;
  int protocol = 0;
};

// Interprets `pickle` (the bytes of data.pkl). Errors name the opcode or global at fault and its
// byte offset.
Result<Unpickled> unpickle(std::string_view pickle, const PthLimits& limits);

}  // namespace tensoracle::pth
