#include "io/pth/state_dict.h"

#include <charconv>
#include <optional>
#include <unordered_set>

#include "core/errors.h"

namespace tensoracle::pth {
namespace {

// The name a dict key contributes, or nullopt for keys that cannot name anything.
std::optional<std::string> key_text(const PickleObject& key) {
  if (key.kind == ObjectKind::kString) return key.text;
  if (key.kind == ObjectKind::kInt) return std::to_string(key.integer);
  return std::nullopt;
}

std::string describe_leaf(const PickleObject& value) {
  switch (value.kind) {
    case ObjectKind::kNone: return "None";
    case ObjectKind::kBool: return value.boolean ? "bool True" : "bool False";
    case ObjectKind::kInt: return fmt::format("int {}", value.integer);
    case ObjectKind::kFloat: return fmt::format("float {}", value.real);
    case ObjectKind::kString:
      return value.text.size() <= 40 ? fmt::format("str '{}'", value.text) : fmt::format("str of {} bytes", value.text.size());
    case ObjectKind::kBytes: return fmt::format("bytes of length {}", value.text.size());
    case ObjectKind::kGlobal: return fmt::format("'{}'", value.text);
    case ObjectKind::kStorage: return fmt::format("bare storage '{}'", value.storage->key);
    default: return std::string(object_kind_name(value.kind));
  }
}

bool is_container(const PickleObject& value) {
  return value.kind == ObjectKind::kDict || value.kind == ObjectKind::kList || value.kind == ObjectKind::kTuple;
}

class Collector {
 public:
  explicit Collector(const PthLimits& limits) : limits_(limits) {}

  Status visit(const PickleObject& value, const std::string& name, size_t depth) {
    if (depth > limits_.max_depth)
      return corrupt_data("'{}' is nested deeper than {} levels (limit)",
                          name.size() > 60 ? name.substr(0, 60) + "..." : name, limits_.max_depth);
    if (++visits_ > limits_.max_objects)
      return corrupt_data("the object graph expands to more than {} values (shared objects repeated?)",
                          limits_.max_objects);
    if (value.kind == ObjectKind::kTensor) {
      const std::string tensor_name = name.empty() ? "tensor" : name;
      if (!names_.insert(tensor_name).second) return corrupt_data("two tensors are named '{}'", tensor_name);
      out_.tensors.push_back({tensor_name, value.tensor});
      return Status::ok();
    }
    if (!is_container(value)) {
      out_.notes.push_back(fmt::format("skipped '{}' ({})", name, describe_leaf(value)));
      return Status::ok();
    }
    const size_t tensors_before = out_.tensors.size();
    const size_t notes_before = out_.notes.size();
    if (value.kind == ObjectKind::kDict) {
      for (const auto& [key, item] : value.entries) {
        const std::optional<std::string> text = key_text(*key);
        if (!text)
          return corrupt_data("dict '{}' has a {} key; only str and int keys can name tensors", name,
                              object_kind_name(key->kind));
        TO_RETURN_IF_ERROR(visit(*item, join(name, *text), depth + 1));
      }
    } else {
      for (size_t i = 0; i < value.items.size(); ++i)
        TO_RETURN_IF_ERROR(visit(*value.items[i], join(name, std::to_string(i)), depth + 1));
    }
    // A container holding no tensor is one note, not one per value (optimizer param_groups);
    // the outermost such container names it. The root keeps its details.
    if (!name.empty() && out_.tensors.size() == tensors_before && out_.notes.size() > notes_before) {
      out_.notes.resize(notes_before);
      out_.notes.push_back(fmt::format("skipped '{}' ({} without tensors)", name, object_kind_name(value.kind)));
    }
    return Status::ok();
  }

  CollectedTensors take() { return std::move(out_); }

 private:
  static std::string join(const std::string& prefix, const std::string& part) {
    return prefix.empty() ? part : prefix + "." + part;
  }

  const PthLimits& limits_;
  size_t visits_ = 0;
  std::unordered_set<std::string> names_;
  CollectedTensors out_;
};

std::vector<std::string> split_key(std::string_view key) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t dot = key.find('.', start);
    parts.emplace_back(key.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
    if (dot == std::string_view::npos) return parts;
    start = dot + 1;
  }
}

std::string join_parts(const std::vector<std::string>& parts, size_t begin, size_t end) {
  std::string out;
  for (size_t i = begin; i < end; ++i) out += (i > begin ? "." : "") + parts[i];
  return out;
}

std::string list_keys(const PickleObject& dict) {
  std::string out;
  size_t shown = 0;
  for (const auto& entry : dict.entries) {
    const std::optional<std::string> text = key_text(*entry.first);
    if (!text) continue;
    if (shown == 10) return out + ", ...";
    out += (shown++ ? ", '" : "'") + *text + "'";
  }
  return out.empty() ? "none" : out;
}

// Walks `key` from `root`. Returns the selected object and the name of its last step.
Result<std::pair<const PickleObject*, std::string>> select(const PickleObject& root, std::string_view key) {
  const std::vector<std::string> parts = split_key(key);
  const PickleObject* at = &root;
  std::string last;
  for (size_t i = 0; i < parts.size();) {
    const std::string where = i == 0 ? "the saved object" : "'" + join_parts(parts, 0, i) + "'";
    if (at->kind == ObjectKind::kDict) {
      // The longest run of remaining steps that is one key wins: "module.layer" may be a key.
      size_t matched = 0;
      const PickleObject* found = nullptr;
      for (size_t end = parts.size(); end > i && !found; --end) {
        const std::string candidate = join_parts(parts, i, end);
        for (auto it = at->entries.rbegin(); it != at->entries.rend(); ++it) {  // the last assignment wins
          if (key_text(*it->first) == candidate) {
            found = it->second;
            matched = end - i;
            break;
          }
        }
      }
      if (!found)
        return not_found("key '{}': {} has no entry '{}' (it has {})", key, where, parts[i], list_keys(*at));
      last = join_parts(parts, i, i + matched);
      at = found;
      i += matched;
    } else if (at->kind == ObjectKind::kList || at->kind == ObjectKind::kTuple) {
      const std::string& step = parts[i];
      size_t index = 0;
      const auto [end, error] = std::from_chars(step.data(), step.data() + step.size(), index);
      const bool numeric = !step.empty() && error == std::errc() && end == step.data() + step.size();
      if (!numeric || index >= at->items.size())
        return not_found("key '{}': {} is a {} of {} items; '{}' is not an index into it", key, where,
                         object_kind_name(at->kind), at->items.size(), step);
      last = step;
      at = at->items[index];
      ++i;
    } else {
      return not_found("key '{}': {} is a {}, which has no entry '{}'", key, where, object_kind_name(at->kind),
                       parts[i]);
    }
  }
  return std::make_pair(at, last);
}

}  // namespace

Result<CollectedTensors> collect_tensors(const PickleObject& root, std::string_view key, const PthLimits& limits) {
  const PickleObject* selected = &root;
  std::string bare_name;
  if (!key.empty()) {
    TO_ASSIGN_OR_RETURN(auto selection, select(root, key));
    selected = selection.first;
    bare_name = selection.second;
  }
  Collector collector(limits);
  // A selected bare tensor is named after the key's last step; inside containers names are paths.
  TO_RETURN_IF_ERROR(collector.visit(*selected, selected->kind == ObjectKind::kTensor ? bare_name : "", 0));
  return collector.take();
}

}  // namespace tensoracle::pth
