// Spells pickle opcodes for tests, so that each test shows the exact stream it feeds the reader.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tensoracle::pth::pickle_ops {

inline std::string le(uint64_t value, int bytes) {
  std::string out;
  for (int i = 0; i < bytes; ++i) out += static_cast<char>((value >> (8 * i)) & 0xFF);
  return out;
}

inline std::string proto(int version) { return std::string("\x80", 1) + static_cast<char>(version); }
inline std::string stop() { return "."; }
inline std::string mark() { return "("; }
inline std::string none() { return "N"; }
inline std::string binint1(uint8_t v) { return "K" + le(v, 1); }
inline std::string binint(int32_t v) { return "J" + le(static_cast<uint32_t>(v), 4); }
inline std::string long1(int64_t v, int bytes) { return std::string("\x8a", 1) + static_cast<char>(bytes) + le(static_cast<uint64_t>(v), bytes); }
inline std::string str(std::string_view s) { return "X" + le(s.size(), 4) + std::string(s); }
inline std::string short_str(std::string_view s) { return std::string("\x8c", 1) + static_cast<char>(s.size()) + std::string(s); }
inline std::string global(std::string_view module, std::string_view name) {
  return "c" + std::string(module) + "\n" + std::string(name) + "\n";
}
inline std::string stack_global() { return "\x93"; }
inline std::string empty_dict() { return "}"; }
inline std::string empty_list() { return "]"; }
inline std::string empty_tuple() { return ")"; }
inline std::string tuple() { return "t"; }  // after mark()
inline std::string tuple2() { return "\x86"; }
inline std::string setitems() { return "u"; }  // after mark()
inline std::string setitem() { return "s"; }
inline std::string appends() { return "e"; }  // after mark()
inline std::string append() { return "a"; }
inline std::string reduce() { return "R"; }
inline std::string build() { return "b"; }
inline std::string binpersid() { return "Q"; }
inline std::string binput(uint8_t i) { return "q" + le(i, 1); }
inline std::string binget(uint8_t i) { return "h" + le(i, 1); }
inline std::string memoize() { return "\x94"; }
inline std::string newtrue() { return "\x88"; }
inline std::string binfloat_one_half() { return std::string("G\x3f\xe0\x00\x00\x00\x00\x00\x00", 9); }

// An int tuple such as (2, 3): MARK, BININT1..., TUPLE.
inline std::string int_tuple(std::initializer_list<uint8_t> values) {
  std::string out = mark();
  for (uint8_t v : values) out += binint1(v);
  return out + tuple();
}

// ('storage', torch.<storage_class>, key, 'cpu', numel) BINPERSID
inline std::string storage(std::string_view storage_class, std::string_view key, uint8_t numel,
                           std::string_view module = "torch") {
  return mark() + str("storage") + global(module, storage_class) + str(key) + str("cpu") + binint1(numel) + tuple() +
         binpersid();
}

// torch._utils._rebuild_tensor_v2(storage, offset, size, stride, False, OrderedDict())
inline std::string tensor_v2(const std::string& storage_pid, uint8_t offset, const std::string& size,
                             const std::string& stride) {
  return global("torch._utils", "_rebuild_tensor_v2") + mark() + storage_pid + binint1(offset) + size + stride +
         "\x89" + global("collections", "OrderedDict") + empty_tuple() + reduce() + tuple() + reduce();
}

}  // namespace tensoracle::pth::pickle_ops
