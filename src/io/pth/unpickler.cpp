// The pickle virtual machine, restricted to the opcodes a state dict needs.
#include <cstring>
#include <unordered_map>

#include "core/errors.h"
#include "io/pth/pickle.h"
#include "io/pth/torch_globals.h"

namespace tensoracle::pth {
namespace {

// Every opcode of pickle protocols 0-5, so that a rejection names the one it saw.
std::string_view opcode_name(uint8_t op) {
  switch (op) {
    case '(': return "MARK";
    case '.': return "STOP";
    case '0': return "POP";
    case '1': return "POP_MARK";
    case '2': return "DUP";
    case 'F': return "FLOAT";
    case 'I': return "INT";
    case 'J': return "BININT";
    case 'K': return "BININT1";
    case 'L': return "LONG";
    case 'M': return "BININT2";
    case 'N': return "NONE";
    case 'P': return "PERSID";
    case 'Q': return "BINPERSID";
    case 'R': return "REDUCE";
    case 'S': return "STRING";
    case 'T': return "BINSTRING";
    case 'U': return "SHORT_BINSTRING";
    case 'V': return "UNICODE";
    case 'X': return "BINUNICODE";
    case 'a': return "APPEND";
    case 'b': return "BUILD";
    case 'c': return "GLOBAL";
    case 'd': return "DICT";
    case '}': return "EMPTY_DICT";
    case 'e': return "APPENDS";
    case 'g': return "GET";
    case 'h': return "BINGET";
    case 'i': return "INST";
    case 'j': return "LONG_BINGET";
    case 'l': return "LIST";
    case ']': return "EMPTY_LIST";
    case 'o': return "OBJ";
    case 'p': return "PUT";
    case 'q': return "BINPUT";
    case 'r': return "LONG_BINPUT";
    case 's': return "SETITEM";
    case 't': return "TUPLE";
    case ')': return "EMPTY_TUPLE";
    case 'u': return "SETITEMS";
    case 'G': return "BINFLOAT";
    case 0x80: return "PROTO";
    case 0x81: return "NEWOBJ";
    case 0x82: return "EXT1";
    case 0x83: return "EXT2";
    case 0x84: return "EXT4";
    case 0x85: return "TUPLE1";
    case 0x86: return "TUPLE2";
    case 0x87: return "TUPLE3";
    case 0x88: return "NEWTRUE";
    case 0x89: return "NEWFALSE";
    case 0x8a: return "LONG1";
    case 0x8b: return "LONG4";
    case 'B': return "BINBYTES";
    case 'C': return "SHORT_BINBYTES";
    case 0x8c: return "SHORT_BINUNICODE";
    case 0x8d: return "BINUNICODE8";
    case 0x8e: return "BINBYTES8";
    case 0x8f: return "EMPTY_SET";
    case 0x90: return "ADDITEMS";
    case 0x91: return "FROZENSET";
    case 0x92: return "NEWOBJ_EX";
    case 0x93: return "STACK_GLOBAL";
    case 0x94: return "MEMOIZE";
    case 0x95: return "FRAME";
    case 0x96: return "BYTEARRAY8";
    case 0x97: return "NEXT_BUFFER";
    case 0x98: return "READONLY_BUFFER";
    default: return "";
  }
}

class Machine {
 public:
  Machine(std::string_view pickle, const PthLimits& limits, Unpickled& out)
      : in_(pickle), limits_(limits), out_(out), arena_(out, limits.max_objects) {}

  Status run() {
    while (true) {
      op_offset_ = pos_;
      if (pos_ >= in_.size())
        return corrupt_data("pickle is truncated: it ends at byte {} without a STOP opcode", in_.size());
      op_ = static_cast<uint8_t>(in_[pos_++]);
      if (op_ == '.') return stop();
      TO_RETURN_IF_ERROR(step());
    }
  }

 private:
  Status stop() {
    if (!marks_.empty()) return error("STOP with an unclosed MARK");
    if (stack_.size() != 1) return error(fmt::format("STOP with {} values on the stack (expected 1)", stack_.size()));
    out_.root = stack_.back();
    return Status::ok();
  }

  Status step() {
    switch (op_) {
      case 0x80: {  // PROTO
        TO_ASSIGN_OR_RETURN(uint64_t version, read_uint(1));
        if (version < 2 || version > 5) return error(fmt::format("pickle protocol {} is not supported (2 to 5 are)", version));
        out_.protocol = static_cast<int>(version);
        return Status::ok();
      }
      case 0x95: {  // FRAME: a length prefix for buffered reading; the bytes follow inline.
        TO_ASSIGN_OR_RETURN(uint64_t length, read_uint(8));
        if (length > in_.size() - pos_) return error("frame extends past the end of the pickle (truncated)");
        return Status::ok();
      }
      case '(': {
        if (marks_.size() >= limits_.max_marks)
          return error(fmt::format("MARKs nest deeper than {} levels (limit)", limits_.max_marks));
        marks_.push_back(stack_.size());
        return Status::ok();
      }
      case '0': return pop().status();
      case '1': return pop_mark().status();
      case '2': {
        TO_ASSIGN_OR_RETURN(PickleObject * top, peek());
        return push(top);
      }
      case 'N': return push_new(ObjectKind::kNone).status();
      case 0x88:
      case 0x89: {
        TO_ASSIGN_OR_RETURN(PickleObject * b, push_new(ObjectKind::kBool));
        b->boolean = op_ == 0x88;
        return Status::ok();
      }
      case 'J': {
        TO_ASSIGN_OR_RETURN(uint64_t raw, read_uint(4));
        return push_int(static_cast<int32_t>(static_cast<uint32_t>(raw)));
      }
      case 'K': {
        TO_ASSIGN_OR_RETURN(uint64_t raw, read_uint(1));
        return push_int(static_cast<int64_t>(raw));
      }
      case 'M': {
        TO_ASSIGN_OR_RETURN(uint64_t raw, read_uint(2));
        return push_int(static_cast<int64_t>(raw));
      }
      case 0x8a:
      case 0x8b: {  // LONG1, LONG4: little-endian two's complement of the given length
        TO_ASSIGN_OR_RETURN(uint64_t length, read_uint(op_ == 0x8a ? 1 : 4));
        if (length > 8) return error(fmt::format("integer of {} bytes does not fit in 64 bits", length));
        TO_ASSIGN_OR_RETURN(std::string_view bytes, read_bytes(length));
        uint64_t value = 0;
        for (size_t i = 0; i < length; ++i) value |= uint64_t{static_cast<uint8_t>(bytes[i])} << (8 * i);
        if (length > 0 && length < 8 && (static_cast<uint8_t>(bytes[length - 1]) & 0x80))
          value |= ~uint64_t{0} << (8 * length);  // sign-extend
        return push_int(static_cast<int64_t>(value));
      }
      case 'G': {
        TO_ASSIGN_OR_RETURN(std::string_view bytes, read_bytes(8));
        uint64_t bits = 0;
        for (size_t i = 0; i < 8; ++i) bits = bits << 8 | static_cast<uint8_t>(bytes[i]);  // big-endian
        TO_ASSIGN_OR_RETURN(PickleObject * f, push_new(ObjectKind::kFloat));
        std::memcpy(&f->real, &bits, sizeof bits);
        return Status::ok();
      }
      case 'X': return push_text(ObjectKind::kString, 4);
      case 0x8c: return push_text(ObjectKind::kString, 1);
      case 0x8d: return push_text(ObjectKind::kString, 8);
      case 'B': return push_text(ObjectKind::kBytes, 4);
      case 'C': return push_text(ObjectKind::kBytes, 1);
      case 0x8e: return push_text(ObjectKind::kBytes, 8);
      case ')': return push_new(ObjectKind::kTuple).status();
      case 0x85:
      case 0x86:
      case 0x87: return make_tuple_from_top(op_ - 0x84);
      case 't': {
        TO_ASSIGN_OR_RETURN(std::vector<PickleObject*> items, pop_mark());
        TO_ASSIGN_OR_RETURN(PickleObject * tuple, push_new(ObjectKind::kTuple));
        tuple->items = std::move(items);
        return Status::ok();
      }
      case ']': return push_new(ObjectKind::kList).status();
      case 'l': {
        TO_ASSIGN_OR_RETURN(std::vector<PickleObject*> items, pop_mark());
        TO_ASSIGN_OR_RETURN(PickleObject * list, push_new(ObjectKind::kList));
        list->items = std::move(items);
        return Status::ok();
      }
      case 'a': {
        TO_ASSIGN_OR_RETURN(PickleObject * item, pop());
        TO_ASSIGN_OR_RETURN(PickleObject * list, peek_kind(ObjectKind::kList));
        list->items.push_back(item);
        return Status::ok();
      }
      case 'e': {
        TO_ASSIGN_OR_RETURN(std::vector<PickleObject*> items, pop_mark());
        TO_ASSIGN_OR_RETURN(PickleObject * list, peek_kind(ObjectKind::kList));
        list->items.insert(list->items.end(), items.begin(), items.end());
        return Status::ok();
      }
      case '}': return push_new(ObjectKind::kDict).status();
      case 'd': {
        TO_ASSIGN_OR_RETURN(std::vector<PickleObject*> items, pop_mark());
        TO_ASSIGN_OR_RETURN(PickleObject * dict, push_new(ObjectKind::kDict));
        return add_pairs(*dict, items);
      }
      case 's': {
        TO_ASSIGN_OR_RETURN(PickleObject * value, pop());
        TO_ASSIGN_OR_RETURN(PickleObject * key, pop());
        TO_ASSIGN_OR_RETURN(PickleObject * dict, peek_kind(ObjectKind::kDict));
        dict->entries.emplace_back(key, value);
        return Status::ok();
      }
      case 'u': {
        TO_ASSIGN_OR_RETURN(std::vector<PickleObject*> items, pop_mark());
        TO_ASSIGN_OR_RETURN(PickleObject * dict, peek_kind(ObjectKind::kDict));
        return add_pairs(*dict, items);
      }
      case 'q': {
        TO_ASSIGN_OR_RETURN(uint64_t index, read_uint(1));
        return memo_put(index);
      }
      case 'r': {
        TO_ASSIGN_OR_RETURN(uint64_t index, read_uint(4));
        return memo_put(index);
      }
      case 0x94: return memo_put(memo_.size());
      case 'h': {
        TO_ASSIGN_OR_RETURN(uint64_t index, read_uint(1));
        return memo_get(index);
      }
      case 'j': {
        TO_ASSIGN_OR_RETURN(uint64_t index, read_uint(4));
        return memo_get(index);
      }
      case 'c': {
        TO_ASSIGN_OR_RETURN(std::string_view module, read_line());
        TO_ASSIGN_OR_RETURN(std::string_view name, read_line());
        return push_global(module, name);
      }
      case 0x93: {  // STACK_GLOBAL
        TO_ASSIGN_OR_RETURN(PickleObject * name, pop());
        TO_ASSIGN_OR_RETURN(PickleObject * module, pop());
        if (module->kind != ObjectKind::kString || name->kind != ObjectKind::kString)
          return error("STACK_GLOBAL needs two strings");
        return push_global(module->text, name->text);
      }
      case 'R': {
        TO_ASSIGN_OR_RETURN(PickleObject * args, pop());
        TO_ASSIGN_OR_RETURN(PickleObject * callable, pop());
        auto result = apply_global(*callable, *args, arena_, limits_);
        if (!result.is_ok()) return result.status().with_context(where());
        return push(*result);
      }
      case 'b': {  // BUILD: sets attributes (state) on the object below.
        TO_ASSIGN_OR_RETURN(PickleObject * state, pop());
        TO_ASSIGN_OR_RETURN(PickleObject * target, peek());
        // nn.Module.state_dict() attaches `_metadata` (per-module versions) to its OrderedDict:
        // an attribute, not an entry, so it is not a tensor source. Nothing else gets state.
        if (target->kind != ObjectKind::kDict || (state->kind != ObjectKind::kDict && state->kind != ObjectKind::kNone))
          return error(fmt::format("BUILD of a {} with a {} state is not supported", object_kind_name(target->kind),
                                   object_kind_name(state->kind)));
        return Status::ok();
      }
      case 'Q': {
        TO_ASSIGN_OR_RETURN(PickleObject * pid, pop());
        auto storage = persistent_load(*pid, arena_);
        if (!storage.is_ok()) return storage.status().with_context(where());
        return push(*storage);
      }
      default: {
        const std::string_view name = opcode_name(op_);
        if (name.empty()) return error(fmt::format("unknown opcode 0x{:02x}", op_));
        return error(fmt::format("opcode {} (0x{:02x}) is not supported: a state dict never needs it", name, op_));
      }
    }
  }

  // ---- errors ----
  std::string where() const {
    const std::string_view name = opcode_name(op_);
    return fmt::format("pickle byte {} ({})", op_offset_, name.empty() ? "?" : name);
  }
  Status error(const std::string& message) const {
    return corrupt_data("{}: {}", where(), message);
  }

  // ---- input ----
  Result<std::string_view> read_bytes(uint64_t n) {
    if (n > in_.size() - pos_)
      return error(fmt::format("pickle is truncated: {} bytes needed, {} left", n, in_.size() - pos_));
    std::string_view bytes = in_.substr(pos_, n);
    pos_ += n;
    return bytes;
  }
  Result<uint64_t> read_uint(int n) {  // little-endian
    TO_ASSIGN_OR_RETURN(std::string_view bytes, read_bytes(n));
    uint64_t value = 0;
    for (int i = 0; i < n; ++i) value |= uint64_t{static_cast<uint8_t>(bytes[i])} << (8 * i);
    return value;
  }
  Result<std::string_view> read_line() {
    const size_t end = in_.find('\n', pos_);
    if (end == std::string_view::npos) return error("pickle is truncated: unterminated line");
    std::string_view line = in_.substr(pos_, end - pos_);
    pos_ = end + 1;
    return line;
  }

  // ---- stack ----
  Status push(PickleObject* object) {
    if (stack_.size() >= limits_.max_stack)
      return error(fmt::format("value stack exceeds {} entries (limit)", limits_.max_stack));
    stack_.push_back(object);
    return Status::ok();
  }
  Result<PickleObject*> push_new(ObjectKind kind) {
    auto object = arena_.make(kind);
    if (!object.is_ok()) return object.status().with_context(where());
    TO_RETURN_IF_ERROR(push(*object));
    return *object;
  }
  Status push_int(int64_t value) {
    TO_ASSIGN_OR_RETURN(PickleObject * i, push_new(ObjectKind::kInt));
    i->integer = value;
    return Status::ok();
  }
  Status push_text(ObjectKind kind, int length_bytes) {
    TO_ASSIGN_OR_RETURN(uint64_t length, read_uint(length_bytes));
    TO_ASSIGN_OR_RETURN(std::string_view bytes, read_bytes(length));
    TO_ASSIGN_OR_RETURN(PickleObject * text, push_new(kind));
    text->text.assign(bytes.data(), bytes.size());
    return Status::ok();
  }
  Status push_global(std::string_view module, std::string_view name) {
    TO_ASSIGN_OR_RETURN(PickleObject * global, push_new(ObjectKind::kGlobal));
    if (!resolve_global(module, name, *global))
      return error(fmt::format(
          "global '{}.{}' is not allowed: a state dict may only reference tensor, storage, dtype and "
          "OrderedDict names, and this reader never imports or calls anything else",
          module, name));
    return Status::ok();
  }
  Result<PickleObject*> pop() {
    if (stack_.empty() || (!marks_.empty() && stack_.size() <= marks_.back()))
      return error("stack underflow");
    PickleObject* top = stack_.back();
    stack_.pop_back();
    return top;
  }
  Result<PickleObject*> peek() {
    if (stack_.empty() || (!marks_.empty() && stack_.size() <= marks_.back())) return error("stack underflow");
    return stack_.back();
  }
  Result<PickleObject*> peek_kind(ObjectKind kind) {
    TO_ASSIGN_OR_RETURN(PickleObject * top, peek());
    if (top->kind != kind)
      return error(fmt::format("expects a {} below its operands, found a {}", object_kind_name(kind),
                               object_kind_name(top->kind)));
    return top;
  }
  Result<std::vector<PickleObject*>> pop_mark() {
    if (marks_.empty()) return error("no MARK to pop to");
    const size_t mark = marks_.back();
    marks_.pop_back();
    std::vector<PickleObject*> items(stack_.begin() + static_cast<std::ptrdiff_t>(mark), stack_.end());
    stack_.resize(mark);
    return items;
  }
  Status make_tuple_from_top(size_t n) {
    std::vector<PickleObject*> items(n);
    for (size_t i = n; i-- > 0;) {
      TO_ASSIGN_OR_RETURN(items[i], pop());
    }
    TO_ASSIGN_OR_RETURN(PickleObject * tuple, push_new(ObjectKind::kTuple));
    tuple->items = std::move(items);
    return Status::ok();
  }
  Status add_pairs(PickleObject& dict, const std::vector<PickleObject*>& items) {
    if (items.size() % 2 != 0) return error("odd number of keys and values");
    for (size_t i = 0; i < items.size(); i += 2) dict.entries.emplace_back(items[i], items[i + 1]);
    return Status::ok();
  }

  // ---- memo ----
  Status memo_put(uint64_t index) {
    TO_ASSIGN_OR_RETURN(PickleObject * top, peek());
    if (memo_.size() >= limits_.max_memo && memo_.find(index) == memo_.end())
      return error(fmt::format("memo exceeds {} entries (limit)", limits_.max_memo));
    memo_[index] = top;
    return Status::ok();
  }
  Status memo_get(uint64_t index) {
    const auto it = memo_.find(index);
    if (it == memo_.end()) return error(fmt::format("memo entry {} was never stored", index));
    return push(it->second);
  }

  std::string_view in_;
  const PthLimits& limits_;
  Unpickled& out_;
  ObjectArena arena_;
  size_t pos_ = 0;
  size_t op_offset_ = 0;
  uint8_t op_ = 0;
  std::vector<PickleObject*> stack_;
  std::vector<size_t> marks_;
  std::unordered_map<uint64_t, PickleObject*> memo_;
};

}  // namespace

std::string_view object_kind_name(ObjectKind kind) {
  switch (kind) {
    case ObjectKind::kNone: return "None";
    case ObjectKind::kBool: return "bool";
    case ObjectKind::kInt: return "int";
    case ObjectKind::kFloat: return "float";
    case ObjectKind::kString: return "str";
    case ObjectKind::kBytes: return "bytes";
    case ObjectKind::kTuple: return "tuple";
    case ObjectKind::kList: return "list";
    case ObjectKind::kDict: return "dict";
    case ObjectKind::kGlobal: return "global";
    case ObjectKind::kStorage: return "storage";
    case ObjectKind::kTensor: return "tensor";
  }
  return "?";
}

Result<Unpickled> unpickle(std::string_view pickle, const PthLimits& limits) {
  Unpickled out;
  Machine machine(pickle, limits, out);
  TO_RETURN_IF_ERROR(machine.run());
  // Moving a deque keeps its elements in place: the tree's pointers stay valid.
  return Result<Unpickled>(std::move(out));
}

}  // namespace tensoracle::pth
