// The restricted unpickler: what it builds from each supported opcode and global, and that
// everything else is refused by name without being executed.
#include <gtest/gtest.h>

#include "io/pth/pickle.h"
#include "host/pth/pickle_builder.h"

namespace tensoracle::pth {
namespace {

using namespace pickle_ops;  // NOLINT: the opcode spellings

Unpickled must_unpickle(const std::string& bytes, const PthLimits& limits = {}) {
  auto result = unpickle(bytes, limits);
  EXPECT_TRUE(result.is_ok()) << result.status().to_string();
  return result.is_ok() ? std::move(result).value() : Unpickled{};
}

std::string error_of(const std::string& bytes, const PthLimits& limits = {}) {
  auto result = unpickle(bytes, limits);
  EXPECT_FALSE(result.is_ok()) << "accepted a pickle that must be refused";
  return result.is_ok() ? std::string() : result.status().message();
}

const PickleObject* entry(const PickleObject& dict, const std::string& key) {
  for (const auto& [k, v] : dict.entries)
    if (k->kind == ObjectKind::kString && k->text == key) return v;
  return nullptr;
}

TEST(Unpickle, BuildsPrimitiveValuesInADict) {
  const std::string bytes = proto(2) + empty_dict() + mark() + str("int") + binint1(7) + str("neg") + long1(-2, 1) +
                            str("big") + binint(-100000) + str("half") + binfloat_one_half() + str("none") + none() +
                            str("yes") + newtrue() + setitems() + stop();
  Unpickled u = must_unpickle(bytes);
  ASSERT_NE(u.root, nullptr);
  ASSERT_EQ(u.root->kind, ObjectKind::kDict);
  EXPECT_EQ(u.protocol, 2);
  EXPECT_EQ(entry(*u.root, "int")->integer, 7);
  EXPECT_EQ(entry(*u.root, "neg")->integer, -2);
  EXPECT_EQ(entry(*u.root, "big")->integer, -100000);
  EXPECT_EQ(entry(*u.root, "half")->real, 0.5);
  EXPECT_EQ(entry(*u.root, "none")->kind, ObjectKind::kNone);
  EXPECT_TRUE(entry(*u.root, "yes")->boolean);
}

TEST(Unpickle, MemoSharesOneObjectAsPythonDoes) {
  // d = {}; l = []; d["a"] = l; d["b"] = l; l.append(1)  -- both entries see the append.
  const std::string bytes = proto(2) + empty_dict() + str("a") + empty_list() + binput(0) + setitem() + str("b") +
                            binget(0) + setitem() + binget(0) + binint1(1) + append() + "0" + stop();
  Unpickled u = must_unpickle(bytes);
  const PickleObject* a = entry(*u.root, "a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a, entry(*u.root, "b"));
  ASSERT_EQ(a->items.size(), 1u);
  EXPECT_EQ(a->items[0]->integer, 1);
}

TEST(Unpickle, AcceptsProtocol4FramesStackGlobalAndMemoize) {
  std::string body = short_str("collections") + memoize() + short_str("OrderedDict") + memoize() + stack_global() +
                     memoize() + empty_tuple() + reduce() + stop();
  const std::string bytes = proto(4) + "\x95" + le(body.size(), 8) + body;
  Unpickled u = must_unpickle(bytes);
  EXPECT_EQ(u.protocol, 4);
  EXPECT_EQ(u.root->kind, ObjectKind::kDict);
}

TEST(Unpickle, RebuildsATensorFromAPersistentStorage) {
  const std::string bytes = proto(2) + tensor_v2(storage("HalfStorage", "3", 6), 2, int_tuple({2, 2}), int_tuple({1, 2})) + stop();
  Unpickled u = must_unpickle(bytes);
  ASSERT_EQ(u.root->kind, ObjectKind::kTensor);
  const TensorRef& t = *u.root->tensor;
  EXPECT_EQ(t.dtype, DataType::kFloat16);
  EXPECT_EQ(t.storage->key, "3");
  EXPECT_EQ(t.storage->location, "cpu");
  EXPECT_EQ(t.storage->numel, 6);
  EXPECT_EQ(t.offset, 2);
  EXPECT_EQ(t.sizes, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(t.strides, (std::vector<int64_t>{1, 2}));
}

TEST(Unpickle, MapsEveryLegacyStorageClassToItsDtype) {
  const std::pair<const char*, DataType> classes[] = {
      {"FloatStorage", DataType::kFloat32}, {"DoubleStorage", DataType::kFloat64}, {"HalfStorage", DataType::kFloat16},
      {"BFloat16Storage", DataType::kBFloat16}, {"LongStorage", DataType::kInt64}, {"IntStorage", DataType::kInt32},
      {"ShortStorage", DataType::kInt16}, {"CharStorage", DataType::kInt8}, {"ByteStorage", DataType::kUInt8},
      {"BoolStorage", DataType::kBool}};
  for (const auto& [name, dtype] : classes) {
    Unpickled u = must_unpickle(proto(2) + tensor_v2(storage(name, "0", 4), 0, int_tuple({4}), int_tuple({1})) + stop());
    ASSERT_EQ(u.root->kind, ObjectKind::kTensor) << name;
    EXPECT_EQ(u.root->tensor->dtype, dtype) << name;
  }
}

TEST(Unpickle, RebuildTensorV3TakesItsDtypeFromTheCall) {
  const std::string bytes = proto(2) + global("torch._utils", "_rebuild_tensor_v3") + mark() +
                            storage("UntypedStorage", "0", 8, "torch.storage") + binint1(1) + int_tuple({3}) +
                            int_tuple({1}) + "\x89" + empty_dict() + global("torch", "uint16") + tuple() + reduce() +
                            stop();
  Unpickled u = must_unpickle(bytes);
  ASSERT_EQ(u.root->kind, ObjectKind::kTensor);
  EXPECT_EQ(u.root->tensor->dtype, DataType::kUInt16);
  EXPECT_TRUE(u.root->tensor->storage->untyped);
  EXPECT_EQ(u.root->tensor->storage->numel, 8);  // bytes, for an untyped storage
}

TEST(Unpickle, AParameterIsItsData) {
  const std::string t = tensor_v2(storage("FloatStorage", "0", 4), 0, int_tuple({4}), int_tuple({1}));
  const std::string plain = proto(2) + global("torch._utils", "_rebuild_parameter") + mark() + t + newtrue() +
                            global("collections", "OrderedDict") + empty_tuple() + reduce() + tuple() + reduce() + stop();
  EXPECT_EQ(must_unpickle(plain).root->kind, ObjectKind::kTensor);
  // Parameter subclass path: _rebuild_from_type_v2(_rebuild_tensor_v2, Parameter, args, state).
  const std::string args = mark() + storage("FloatStorage", "0", 4) + binint1(0) + int_tuple({4}) + int_tuple({1}) +
                           "\x89" + empty_dict() + tuple();
  const std::string typed = proto(2) + global("torch._tensor", "_rebuild_from_type_v2") + mark() +
                            global("torch._utils", "_rebuild_tensor_v2") + global("torch.nn.parameter", "Parameter") +
                            args + empty_dict() + tuple() + reduce() + stop();
  EXPECT_EQ(must_unpickle(typed).root->kind, ObjectKind::kTensor);
}

TEST(Unpickle, StateDictMetadataIsAnAttributeNotAnEntry) {
  // OrderedDict(); SETITEMS; BUILD({'_metadata': {...}}) as nn.Module.state_dict() pickles.
  const std::string bytes = proto(2) + global("collections", "OrderedDict") + empty_tuple() + reduce() + mark() +
                            str("w") + binint1(1) + setitems() + empty_dict() + str("_metadata") + empty_dict() +
                            setitem() + build() + stop();
  Unpickled u = must_unpickle(bytes);
  ASSERT_EQ(u.root->entries.size(), 1u);
  EXPECT_NE(entry(*u.root, "w"), nullptr);
}

struct Refusal {
  const char* what;
  std::string bytes;
  const char* message;  // a substring the error must contain
};

class UnpickleRefuses : public ::testing::TestWithParam<Refusal> {};

TEST_P(UnpickleRefuses, NamingTheCulprit) {
  EXPECT_NE(error_of(GetParam().bytes).find(GetParam().message), std::string::npos)
      << "error was: " << error_of(GetParam().bytes);
}

const std::string kTensor = tensor_v2(storage("FloatStorage", "0", 4), 0, int_tuple({4}), int_tuple({1}));

INSTANTIATE_TEST_SUITE_P(
    Hostile, UnpickleRefuses,
    ::testing::Values(
        Refusal{"os_system", proto(2) + global("os", "system") + str("echo hi") + "\x85" + reduce() + stop(),
                "pickle byte 2 (GLOBAL): global 'os.system' is not allowed"},
        Refusal{"posix_system", proto(2) + global("posix", "system") + stop(), "'posix.system'"},
        Refusal{"builtins_eval", proto(2) + global("builtins", "eval") + stop(), "'builtins.eval'"},
        Refusal{"torch_load", proto(2) + global("torch", "load") + stop(), "'torch.load'"},
        Refusal{"stack_global_getattr",
                proto(4) + short_str("builtins") + short_str("getattr") + stack_global() + stop(), "'builtins.getattr'"},
        Refusal{"reduce_of_dtype", proto(2) + global("torch", "float32") + empty_tuple() + reduce() + stop(),
                "REDUCE of 'torch.float32' is not allowed"},
        Refusal{"reduce_of_tensor_class", proto(2) + global("torch", "Tensor") + empty_tuple() + reduce() + stop(),
                "REDUCE of 'torch.Tensor'"},
        Refusal{"reduce_of_string", proto(2) + str("os.system") + empty_tuple() + reduce() + stop(), "REDUCE of a str"},
        Refusal{"ordered_dict_with_args", proto(2) + global("collections", "OrderedDict") + str("x") + "\x85" +
                                             reduce() + stop(),
                "with 1 arguments"},
        Refusal{"inst", proto(2) + mark() + "ios\nsystem\n" + stop(), "opcode INST (0x69)"},
        Refusal{"obj", proto(2) + mark() + global("collections", "OrderedDict") + "o" + stop(), "opcode OBJ"},
        Refusal{"newobj", proto(2) + global("collections", "OrderedDict") + empty_tuple() + "\x81" + stop(),
                "opcode NEWOBJ"},
        Refusal{"ext1", proto(2) + "\x82\x01" + stop(), "opcode EXT1"},
        Refusal{"text_persid", proto(2) + "P0\n" + stop(), "opcode PERSID"},
        Refusal{"unknown_opcode", proto(2) + "\xff" + stop(), "unknown opcode 0xff"},
        Refusal{"protocol_6", proto(6) + none() + stop(), "protocol 6"},
        Refusal{"no_stop", proto(2) + none(), "truncated"},
        Refusal{"short_string", proto(2) + "X" + le(100, 4) + "abc", "truncated"},
        Refusal{"two_values_at_stop", proto(2) + none() + none() + stop(), "2 values"},
        Refusal{"unclosed_mark", proto(2) + mark() + none() + stop(), "unclosed MARK"},
        Refusal{"underflow", proto(2) + append() + stop(), "stack underflow"},
        Refusal{"append_to_dict", proto(2) + empty_dict() + none() + append() + stop(), "expects a list"},
        Refusal{"memo_miss", proto(2) + binget(9) + stop(), "memo entry 9"},
        Refusal{"long_too_big", proto(2) + "\x8a\x09" + std::string(9, '\x01') + stop(), "64 bits"},
        Refusal{"pid_not_storage", proto(2) + mark() + str("module") + str("x") + tuple() + binpersid() + stop(),
                "persistent id"},
        Refusal{"pid_class_not_storage",
                proto(2) + mark() + str("storage") + global("torch", "float32") + str("0") + str("cpu") + binint1(1) +
                    tuple() + binpersid() + stop(),
                "where a storage class is expected"},
        Refusal{"build_on_tensor", proto(2) + kTensor + empty_dict() + build() + stop(), "BUILD of a tensor"},
        Refusal{"tensor_without_storage",
                proto(2) + global("torch._utils", "_rebuild_tensor_v2") + mark() + none() + binint1(0) +
                    int_tuple({1}) + int_tuple({1}) + "\x89" + empty_dict() + tuple() + reduce() + stop(),
                "not a persistent storage reference"},
        Refusal{"negative_offset",
                proto(2) + global("torch._utils", "_rebuild_tensor_v2") + mark() + storage("FloatStorage", "0", 4) +
                    long1(-1, 1) + int_tuple({1}) + int_tuple({1}) + "\x89" + empty_dict() + tuple() + reduce() + stop(),
                "negative storage_offset"},
        Refusal{"rank_mismatch",
                proto(2) + tensor_v2(storage("FloatStorage", "0", 4), 0, int_tuple({2, 2}), int_tuple({1})) + stop(),
                "size has 2 dimensions but stride has 1"},
        Refusal{"v2_on_untyped_storage",
                proto(2) + tensor_v2(storage("UntypedStorage", "0", 4), 0, int_tuple({4}), int_tuple({1})) + stop(),
                "untyped"}),
    [](const ::testing::TestParamInfo<Refusal>& param_info) { return std::string(param_info.param.what); });

TEST(UnpickleLimits, BoundTheStackObjectsMarksAndMemo) {
  PthLimits limits;
  limits.max_stack = 3;
  EXPECT_NE(error_of(proto(2) + none() + none() + none() + none() + stop(), limits).find("stack exceeds 3"),
            std::string::npos);
  limits = PthLimits{};
  limits.max_objects = 3;
  EXPECT_NE(error_of(proto(2) + mark() + none() + none() + none() + none() + tuple() + stop(), limits)
                .find("more than 3 objects"),
            std::string::npos);
  limits = PthLimits{};
  limits.max_marks = 2;
  EXPECT_NE(error_of(proto(2) + mark() + mark() + mark() + stop(), limits).find("deeper than 2"), std::string::npos);
  limits = PthLimits{};
  limits.max_memo = 1;
  EXPECT_NE(error_of(proto(2) + none() + binput(0) + binput(1) + stop(), limits).find("memo exceeds 1"),
            std::string::npos);
  // Re-storing an existing index does not grow the memo.
  EXPECT_EQ(must_unpickle(proto(2) + none() + binput(0) + binput(0) + stop(), limits).root->kind, ObjectKind::kNone);
}

}  // namespace
}  // namespace tensoracle::pth
