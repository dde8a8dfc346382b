#include "io/pth/torch_globals.h"

#include "core/errors.h"

namespace tensoracle::pth {
namespace {

struct GlobalEntry {
  std::string_view module;
  std::string_view name;
  GlobalKind kind;
  DataType dtype = DataType::kUInt8;  // storage classes and dtypes
  bool untyped = false;
};

// The whole whitelist. Legacy storage classes name their element type; torch.UntypedStorage
// holds bytes and is paired with an explicit dtype by _rebuild_tensor_v3.
constexpr GlobalEntry kGlobals[] = {
    {"collections", "OrderedDict", GlobalKind::kOrderedDict},
    {"torch._utils", "_rebuild_tensor_v2", GlobalKind::kRebuildTensorV2},
    {"torch._utils", "_rebuild_tensor_v3", GlobalKind::kRebuildTensorV3},
    {"torch._utils", "_rebuild_parameter", GlobalKind::kRebuildParameter},
    {"torch._utils", "_rebuild_parameter_with_state", GlobalKind::kRebuildParameterWithState},
    {"torch._tensor", "_rebuild_from_type_v2", GlobalKind::kRebuildFromTypeV2},
    {"torch", "Tensor", GlobalKind::kTensorClass},
    {"torch._tensor", "Tensor", GlobalKind::kTensorClass},
    {"torch.nn.parameter", "Parameter", GlobalKind::kTensorClass},
    {"torch", "FloatStorage", GlobalKind::kStorageClass, DataType::kFloat32},
    {"torch", "DoubleStorage", GlobalKind::kStorageClass, DataType::kFloat64},
    {"torch", "HalfStorage", GlobalKind::kStorageClass, DataType::kFloat16},
    {"torch", "BFloat16Storage", GlobalKind::kStorageClass, DataType::kBFloat16},
    {"torch", "LongStorage", GlobalKind::kStorageClass, DataType::kInt64},
    {"torch", "IntStorage", GlobalKind::kStorageClass, DataType::kInt32},
    {"torch", "ShortStorage", GlobalKind::kStorageClass, DataType::kInt16},
    {"torch", "CharStorage", GlobalKind::kStorageClass, DataType::kInt8},
    {"torch", "ByteStorage", GlobalKind::kStorageClass, DataType::kUInt8},
    {"torch", "BoolStorage", GlobalKind::kStorageClass, DataType::kBool},
    {"torch", "UntypedStorage", GlobalKind::kStorageClass, DataType::kUInt8, true},
    {"torch.storage", "UntypedStorage", GlobalKind::kStorageClass, DataType::kUInt8, true},
    {"torch", "float32", GlobalKind::kDtype, DataType::kFloat32},
    {"torch", "float", GlobalKind::kDtype, DataType::kFloat32},
    {"torch", "float64", GlobalKind::kDtype, DataType::kFloat64},
    {"torch", "double", GlobalKind::kDtype, DataType::kFloat64},
    {"torch", "float16", GlobalKind::kDtype, DataType::kFloat16},
    {"torch", "half", GlobalKind::kDtype, DataType::kFloat16},
    {"torch", "bfloat16", GlobalKind::kDtype, DataType::kBFloat16},
    {"torch", "float8_e4m3fn", GlobalKind::kDtype, DataType::kFloat8E4M3},
    {"torch", "float8_e5m2", GlobalKind::kDtype, DataType::kFloat8E5M2},
    {"torch", "int8", GlobalKind::kDtype, DataType::kInt8},
    {"torch", "uint8", GlobalKind::kDtype, DataType::kUInt8},
    {"torch", "int16", GlobalKind::kDtype, DataType::kInt16},
    {"torch", "short", GlobalKind::kDtype, DataType::kInt16},
    {"torch", "uint16", GlobalKind::kDtype, DataType::kUInt16},
    {"torch", "int32", GlobalKind::kDtype, DataType::kInt32},
    {"torch", "int", GlobalKind::kDtype, DataType::kInt32},
    {"torch", "uint32", GlobalKind::kDtype, DataType::kUInt32},
    {"torch", "int64", GlobalKind::kDtype, DataType::kInt64},
    {"torch", "long", GlobalKind::kDtype, DataType::kInt64},
    {"torch", "uint64", GlobalKind::kDtype, DataType::kUInt64},
    {"torch", "bool", GlobalKind::kDtype, DataType::kBool},
};

Status arity_error(const PickleObject& callable, size_t got, std::string_view expected) {
  return corrupt_data("pickle calls '{}' with {} arguments; expected {}", callable.text, got, expected);
}

Result<int64_t> int_arg(const PickleObject& callable, const PickleObject& arg, std::string_view what) {
  if (arg.kind != ObjectKind::kInt)
    return corrupt_data("'{}': {} must be an int, got {}", callable.text, what, object_kind_name(arg.kind));
  return arg.integer;
}

Result<std::vector<int64_t>> int_tuple_arg(const PickleObject& callable, const PickleObject& arg,
                                           std::string_view what, size_t max_rank) {
  if (arg.kind != ObjectKind::kTuple && arg.kind != ObjectKind::kList)
    return corrupt_data("'{}': {} must be a tuple of ints, got {}", callable.text, what, object_kind_name(arg.kind));
  if (arg.items.size() > max_rank)
    return corrupt_data("'{}': {} has {} dimensions (limit {})", callable.text, what, arg.items.size(), max_rank);
  std::vector<int64_t> values;
  values.reserve(arg.items.size());
  for (const PickleObject* item : arg.items) {
    TO_ASSIGN_OR_RETURN(int64_t v, int_arg(callable, *item, what));
    if (v < 0) return corrupt_data("'{}': {} has a negative entry {}", callable.text, what, v);
    values.push_back(v);
  }
  return values;
}

// _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks[, metadata])
// _rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks, dtype[, metadata])
Result<PickleObject*> rebuild_tensor(const PickleObject& callable, const std::vector<PickleObject*>& args,
                                     bool v3, ObjectArena& arena, const PthLimits& limits) {
  const size_t min_args = v3 ? 7 : 6;
  if (args.size() != min_args && args.size() != min_args + 1)
    return arity_error(callable, args.size(), v3 ? "7 or 8" : "6 or 7");
  const PickleObject& storage = *args[0];
  if (storage.kind != ObjectKind::kStorage)
    return corrupt_data("'{}': the storage argument is a {}, not a persistent storage reference", callable.text,
                        object_kind_name(storage.kind));
  TensorRef* tensor = arena.make_tensor();
  tensor->storage = storage.storage;
  tensor->dtype = storage.storage->dtype;
  if (v3) {
    const PickleObject& dtype = *args[6];
    if (dtype.kind != ObjectKind::kGlobal || dtype.global != GlobalKind::kDtype)
      return corrupt_data("'{}': the dtype argument is a {}, not a torch dtype", callable.text,
                          object_kind_name(dtype.kind));
    tensor->dtype = dtype.dtype;
  } else if (storage.storage->untyped) {
    return corrupt_data("'{}' needs a typed storage; storage '{}' is untyped", callable.text, storage.storage->key);
  }
  TO_ASSIGN_OR_RETURN(tensor->offset, int_arg(callable, *args[1], "storage_offset"));
  if (tensor->offset < 0) return corrupt_data("'{}': negative storage_offset {}", callable.text, tensor->offset);
  TO_ASSIGN_OR_RETURN(tensor->sizes, int_tuple_arg(callable, *args[2], "size", limits.max_rank));
  TO_ASSIGN_OR_RETURN(tensor->strides, int_tuple_arg(callable, *args[3], "stride", limits.max_rank));
  if (tensor->sizes.size() != tensor->strides.size())
    return corrupt_data("'{}': size has {} dimensions but stride has {}", callable.text, tensor->sizes.size(),
                        tensor->strides.size());
  TO_ASSIGN_OR_RETURN(PickleObject * result, arena.make(ObjectKind::kTensor));
  result->tensor = tensor;
  return result;
}

Result<PickleObject*> call(const PickleObject& callable, const std::vector<PickleObject*>& args, ObjectArena& arena,
                           const PthLimits& limits, int depth);

// _rebuild_from_type_v2(func, new_type, args, state): func(*args) re-typed as new_type.
Result<PickleObject*> rebuild_from_type(const PickleObject& callable, const std::vector<PickleObject*>& args,
                                        ObjectArena& arena, const PthLimits& limits, int depth) {
  if (args.size() != 4) return arity_error(callable, args.size(), "4");
  const PickleObject& type = *args[1];
  if (type.kind != ObjectKind::kGlobal || type.global != GlobalKind::kTensorClass)
    return corrupt_data("'{}': the type argument must be torch.Tensor or torch.nn.parameter.Parameter",
                        callable.text);
  const PickleObject& inner_args = *args[2];
  if (inner_args.kind != ObjectKind::kTuple)
    return corrupt_data("'{}': the args argument must be a tuple", callable.text);
  if (depth > 0) return corrupt_data("'{}' may not be nested", callable.text);
  return call(*args[0], inner_args.items, arena, limits, depth + 1);
}

Result<PickleObject*> call(const PickleObject& callable, const std::vector<PickleObject*>& args, ObjectArena& arena,
                           const PthLimits& limits, int depth) {
  if (callable.kind != ObjectKind::kGlobal)
    return corrupt_data("REDUCE of a {} (only whitelisted functions may be called)", object_kind_name(callable.kind));
  switch (callable.global) {
    case GlobalKind::kOrderedDict:
      // OrderedDict pickles as OrderedDict() followed by SETITEMS.
      if (!args.empty()) return arity_error(callable, args.size(), "0");
      return arena.make(ObjectKind::kDict);
    case GlobalKind::kRebuildTensorV2:
      return rebuild_tensor(callable, args, false, arena, limits);
    case GlobalKind::kRebuildTensorV3:
      return rebuild_tensor(callable, args, true, arena, limits);
    case GlobalKind::kRebuildParameter:
    case GlobalKind::kRebuildParameterWithState: {
      // (data, requires_grad, backward_hooks[, state]): the parameter is its data.
      const size_t expected = callable.global == GlobalKind::kRebuildParameter ? 3 : 4;
      if (args.size() != expected) return arity_error(callable, args.size(), std::to_string(expected));
      if (args[0]->kind != ObjectKind::kTensor)
        return corrupt_data("'{}': data is a {}, not a tensor", callable.text, object_kind_name(args[0]->kind));
      return args[0];
    }
    case GlobalKind::kRebuildFromTypeV2:
      return rebuild_from_type(callable, args, arena, limits, depth);
    case GlobalKind::kTensorClass:
    case GlobalKind::kStorageClass:
    case GlobalKind::kDtype:
      break;
  }
  return corrupt_data("REDUCE of '{}' is not allowed (it is whitelisted as a type, not as a function to call)",
                      callable.text);
}

}  // namespace

Result<PickleObject*> ObjectArena::make(ObjectKind kind) {
  if (out_.objects.size() >= max_objects_)
    return corrupt_data("pickle builds more than {} objects (limit)", max_objects_);
  PickleObject& object = out_.objects.emplace_back();
  object.kind = kind;
  return &object;
}

bool resolve_global(std::string_view module, std::string_view name, PickleObject& global) {
  for (const GlobalEntry& entry : kGlobals) {
    if (entry.module == module && entry.name == name) {
      global.kind = ObjectKind::kGlobal;
      global.global = entry.kind;
      global.dtype = entry.dtype;
      global.untyped_storage = entry.untyped;
      global.text = std::string(module) + "." + std::string(name);
      return true;
    }
  }
  return false;
}

Result<PickleObject*> apply_global(const PickleObject& callable, const PickleObject& args, ObjectArena& arena,
                                   const PthLimits& limits) {
  if (args.kind != ObjectKind::kTuple)
    return corrupt_data("REDUCE arguments are a {}, not a tuple", object_kind_name(args.kind));
  return call(callable, args.items, arena, limits, 0);
}

Result<PickleObject*> persistent_load(const PickleObject& pid, ObjectArena& arena) {
  // ('storage', storage_type, key, location, numel)
  const auto& f = pid.items;
  if (pid.kind != ObjectKind::kTuple || f.size() != 5 || f[0]->kind != ObjectKind::kString ||
      f[0]->text != "storage")
    return corrupt_data("persistent id is not a ('storage', type, key, location, numel) tuple");
  if (f[1]->kind != ObjectKind::kGlobal || f[1]->global != GlobalKind::kStorageClass)
    return corrupt_data("persistent id names a {} '{}' where a storage class is expected",
                        object_kind_name(f[1]->kind), f[1]->text);
  if (f[2]->kind != ObjectKind::kString || f[3]->kind != ObjectKind::kString || f[4]->kind != ObjectKind::kInt)
    return corrupt_data("persistent id fields must be (str key, str location, int numel)");
  if (f[4]->integer < 0) return corrupt_data("storage '{}' has a negative size {}", f[2]->text, f[4]->integer);
  StorageRef* storage = arena.make_storage();
  storage->key = f[2]->text;
  storage->location = f[3]->text;
  storage->dtype = f[1]->dtype;
  storage->untyped = f[1]->untyped_storage;
  storage->numel = f[4]->integer;
  TO_ASSIGN_OR_RETURN(PickleObject * object, arena.make(ObjectKind::kStorage));
  object->storage = storage;
  return object;
}

}  // namespace tensoracle::pth
