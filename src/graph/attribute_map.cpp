// Attribute structs <-> their serialized AttributeMap (network.h), driven by each struct's field
// list (layers.h): one codec per field type, so a struct with a new field, or a new op, needs no
// code here.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <set>

#include "core/errors.h"
#include "graph/op_def.h"
#include "tensoracle/network.h"

namespace tensoracle {

namespace {

// What decoding a struct knows: the layer and op (for messages) and which keys it consumed.
struct DecodeContext {
  const AttributeMap& map;
  const std::string& layer;
  OpKind kind;
  std::set<std::string> used;

  const AttributeValue* find(const std::string& key) {
    auto it = map.find(key);
    if (it == map.end()) return nullptr;
    used.insert(key);
    return &it->second;
  }
  template <typename... Args>
  Status error(const std::string& key, fmt::format_string<Args...> format, Args&&... args) const {
    return invalid_argument("layer '{}' ({}): attribute '{}' {}", layer, op_kind_name(kind), key,
                            fmt::format(format, std::forward<Args>(args)...));
  }
};

const char* value_type_name(const AttributeValue& v) {
  constexpr const char* kNames[] = {"a bool", "an integer", "a number", "a string", "an integer list", "a number list"};
  return kNames[v.index()];
}

Status wrong_type(const DecodeContext& c, const std::string& key, const AttributeValue& v, const char* expected) {
  return c.error(key, "must be {}; got {} ({})", expected, attribute_to_string(v), value_type_name(v));
}

template <typename T>
struct Codec;

// What a field stored as AttributeValue alternative A must be, for messages.
template <typename A>
constexpr const char* kExpected = "";
template <>
constexpr const char* kExpected<bool> = "a bool";
template <>
constexpr const char* kExpected<int64_t> = "an integer";
template <>
constexpr const char* kExpected<double> = "a number";
template <>
constexpr const char* kExpected<std::string> = "a string";
template <>
constexpr const char* kExpected<std::vector<int64_t>> = "a list of integers";
template <>
constexpr const char* kExpected<std::vector<double>> = "a list of numbers";

// A field stored as the AttributeValue alternative of its own type (integers widen to numbers).
template <typename A>
struct PlainCodec {
  static void encode(const A& v, const std::string& key, AttributeMap& map) { map[key] = v; }
  static Status decode(DecodeContext& c, const std::string& key, A& out) {
    const AttributeValue* v = c.find(key);
    if (!v) return Status::ok();
    if (const A* a = std::get_if<A>(v)) {
      out = *a;
      return Status::ok();
    }
    if constexpr (std::is_same_v<A, double>) {
      if (const int64_t* i = std::get_if<int64_t>(v)) {
        out = static_cast<double>(*i);
        return Status::ok();
      }
    }
    if constexpr (std::is_same_v<A, std::vector<double>>) {
      if (const auto* ints = std::get_if<std::vector<int64_t>>(v)) {  // JSON writes [] and [2, 3] so
        out.assign(ints->begin(), ints->end());
        return Status::ok();
      }
    }
    return wrong_type(c, key, *v, kExpected<A>);
  }
};
template <>
struct Codec<bool> : PlainCodec<bool> {};
template <>
struct Codec<int64_t> : PlainCodec<int64_t> {};
template <>
struct Codec<double> : PlainCodec<double> {};
template <>
struct Codec<std::string> : PlainCodec<std::string> {};
template <>
struct Codec<std::vector<int64_t>> : PlainCodec<std::vector<int64_t>> {};
template <>
struct Codec<std::vector<double>> : PlainCodec<std::vector<double>> {};

// Unset: no key at all.
template <>
struct Codec<std::optional<double>> {
  static void encode(const std::optional<double>& v, const std::string& key, AttributeMap& map) {
    if (v) map[key] = *v;
  }
  static Status decode(DecodeContext& c, const std::string& key, std::optional<double>& out) {
    if (!c.map.count(key)) return Status::ok();
    double value = 0;
    TO_RETURN_IF_ERROR(Codec<double>::decode(c, key, value));
    out = value;
    return Status::ok();
  }
};

template <>
struct Codec<Dims> {
  static void encode(const Dims& v, const std::string& key, AttributeMap& map) { map[key] = v.values(); }
  static Status decode(DecodeContext& c, const std::string& key, Dims& out) {
    std::vector<int64_t> values = out.values();
    TO_RETURN_IF_ERROR(Codec<std::vector<int64_t>>::decode(c, key, values));
    out = Dims(std::move(values));
    return Status::ok();
  }
};

Status decode_data_type(DecodeContext& c, const std::string& key, const std::string& name, DataType& out) {
  auto type = parse_data_type(name);
  if (!type.is_ok()) return c.error(key, "has an unknown type \"{}\": {}", name, type.status().message());
  out = *type;
  return Status::ok();
}

template <>
struct Codec<DataType> {
  static void encode(DataType v, const std::string& key, AttributeMap& map) { map[key] = std::string(data_type_name(v)); }
  static Status decode(DecodeContext& c, const std::string& key, DataType& out) {
    if (!c.map.count(key)) return Status::ok();
    std::string name;
    TO_RETURN_IF_ERROR(Codec<std::string>::decode(c, key, name));
    return decode_data_type(c, key, name, out);
  }
};

// "fp16,int32"; "" for none.
template <>
struct Codec<std::vector<DataType>> {
  static void encode(const std::vector<DataType>& v, const std::string& key, AttributeMap& map) {
    std::vector<std::string_view> names;
    for (DataType t : v) names.push_back(data_type_name(t));
    map[key] = fmt::format("{}", fmt::join(names, ","));
  }
  static Status decode(DecodeContext& c, const std::string& key, std::vector<DataType>& out) {
    if (!c.map.count(key)) return Status::ok();
    std::string text;
    TO_RETURN_IF_ERROR(Codec<std::string>::decode(c, key, text));
    out.clear();
    for (size_t pos = 0; !text.empty() && pos <= text.size();) {
      const size_t comma = std::min(text.find(',', pos), text.size());
      TO_RETURN_IF_ERROR(decode_data_type(c, key, text.substr(pos, comma - pos), out.emplace_back()));
      pos = comma + 1;
    }
    return Status::ok();
  }
};

// A list of shapes `<p>_shapes` is stored as `<p>_ranks` (each shape's rank) and `<p>_dims` (all
// dims, concatenated).
template <>
struct Codec<std::vector<Dims>> {
  static std::string prefix(const std::string& field) {
    const std::string suffix = "_shapes";
    const bool named = field.size() > suffix.size() && field.compare(field.size() - suffix.size(), suffix.size(), suffix) == 0;
    return named ? field.substr(0, field.size() - suffix.size()) : field;
  }
  static void encode(const std::vector<Dims>& v, const std::string& key, AttributeMap& map) {
    std::vector<int64_t> ranks, dims;
    for (const Dims& d : v) {
      ranks.push_back(static_cast<int64_t>(d.rank()));
      dims.insert(dims.end(), d.begin(), d.end());
    }
    map[prefix(key) + "_ranks"] = ranks;
    map[prefix(key) + "_dims"] = dims;
  }
  static Status decode(DecodeContext& c, const std::string& key, std::vector<Dims>& out) {
    const std::string ranks_key = prefix(key) + "_ranks", dims_key = prefix(key) + "_dims";
    std::vector<int64_t> ranks, dims;
    for (const Dims& d : out) {
      ranks.push_back(static_cast<int64_t>(d.rank()));
      dims.insert(dims.end(), d.begin(), d.end());
    }
    TO_RETURN_IF_ERROR(Codec<std::vector<int64_t>>::decode(c, ranks_key, ranks));
    TO_RETURN_IF_ERROR(Codec<std::vector<int64_t>>::decode(c, dims_key, dims));
    out.clear();
    size_t next = 0;
    for (int64_t rank : ranks) {
      if (rank < 0 || rank > static_cast<int64_t>(Dims::kMaxRank) || static_cast<size_t>(rank) > dims.size() - next)
        return c.error(ranks_key, "{} does not fit the {} dims of '{}'", attribute_to_string(ranks), dims.size(), dims_key);
      out.emplace_back(std::vector<int64_t>(dims.begin() + static_cast<std::ptrdiff_t>(next),
                                            dims.begin() + static_cast<std::ptrdiff_t>(next + rank)));
      next += static_cast<size_t>(rank);
    }
    if (next != dims.size())
      return c.error(dims_key, "has {} dims but the ranks {} account for {}", dims.size(), attribute_to_string(ranks), next);
    return Status::ok();
  }
};

// Enumerations by name.
template <typename E>
struct EnumCodec {
  static void encode(E v, const std::string& key, AttributeMap& map) { map[key] = std::string(enum_name(v)); }
  static Status decode(DecodeContext& c, const std::string& key, E& out) {
    if (!c.map.count(key)) return Status::ok();
    std::string name;
    TO_RETURN_IF_ERROR(Codec<std::string>::decode(c, key, name));
    auto value = parse_enum<E>(name);
    if (!value) return c.error(key, "has an unknown value \"{}\" (one of {})", name, fmt::join(enum_names<E>(), ", "));
    out = *value;
    return Status::ok();
  }
};
template <>
struct Codec<ElementwiseOp> : EnumCodec<ElementwiseOp> {};
template <>
struct Codec<UnaryOp> : EnumCodec<UnaryOp> {};
template <>
struct Codec<ActivationKind> : EnumCodec<ActivationKind> {};
template <>
struct Codec<ReduceOp> : EnumCodec<ReduceOp> {};
template <>
struct Codec<PoolingKind> : EnumCodec<PoolingKind> {};
template <>
struct Codec<ResizeMode> : EnumCodec<ResizeMode> {};
template <>
struct Codec<ResizeCoordinates> : EnumCodec<ResizeCoordinates> {};
template <>
struct Codec<PadMode> : EnumCodec<PadMode> {};
template <>
struct Codec<GridSampleMode> : EnumCodec<GridSampleMode> {};
template <>
struct Codec<GridSamplePadding> : EnumCodec<GridSamplePadding> {};

template <typename T>
using FieldType = std::remove_cv_t<std::remove_reference_t<T>>;

template <typename S>
Result<OpAttributes> decode_struct(DecodeContext& c) {
  S attributes;
  Status status = Status::ok();
  std::vector<std::string> fields;
  S::visit_fields([&](const char* field, auto member) {
    fields.push_back(field);
    if (!status.is_ok()) return;
    using T = FieldType<decltype(attributes.*member)>;
    status = Codec<T>::decode(c, field, attributes.*member);
  });
  TO_RETURN_IF_ERROR(status);
  for (const auto& [key, value] : c.map)
    if (!c.used.count(key))
      return invalid_argument("layer '{}' ({}): unknown attribute '{}' = {} ({} takes: {})", c.layer,
                              op_kind_name(c.kind), key, attribute_to_string(value), op_kind_name(c.kind),
                              fields.empty() ? std::string("none") : fmt::format("{}", fmt::join(fields, ", ")));
  return OpAttributes(std::move(attributes));
}

bool known(DataType t) { return static_cast<size_t>(t) < all_data_types().size(); }

// The name of a field value that is no value of its enumeration, or "" (every value known).
template <typename T>
std::string unknown_value(const T& v) {
  if constexpr (std::is_same_v<T, DataType>) {
    return known(v) ? "" : std::to_string(static_cast<int>(v));
  } else if constexpr (std::is_same_v<T, std::vector<DataType>>) {
    for (DataType t : v)
      if (!known(t)) return std::to_string(static_cast<int>(t));
    return "";
  } else if constexpr (std::is_enum_v<T>) {
    return enum_name(v) == "unknown" ? std::to_string(static_cast<int>(v)) : "";
  } else {
    return "";
  }
}

}  // namespace

namespace graph {

Status check_enumerations(const OpAttributes& attributes, const std::string& layer) {
  Status status = Status::ok();
  std::visit(
      [&](const auto& a) {
        FieldType<decltype(a)>::visit_fields([&](const char* field, auto member) {
          const std::string bad = unknown_value(a.*member);
          if (status.is_ok() && !bad.empty())
            status = invalid_argument("layer '{}' ({}): attribute '{}' holds {}, which is no value of its enumeration",
                                      layer, op_kind_name(op_kind_of_attributes(attributes)), field, bad);
        });
      },
      attributes);
  return status;
}

}  // namespace graph

AttributeMap to_attribute_map(const OpAttributes& attributes) {
  AttributeMap map;
  std::visit(
      [&](const auto& a) {
        using S = FieldType<decltype(a)>;
        S::visit_fields([&](const char* field, auto member) {
          using T = FieldType<decltype(a.*member)>;
          Codec<T>::encode(a.*member, field, map);
        });
      },
      attributes);
  return map;
}

Result<OpAttributes> attributes_from_map(OpKind kind, const AttributeMap& map, const std::string& layer) {
  DecodeContext c{map, layer, kind, {}};
  switch (kind) {
#define TO_DECODE_CASE_(Kind, name, Attributes, category) \
  case OpKind::k##Kind: return decode_struct<Attributes>(c);
    TENSORACLE_OP_KINDS(TO_DECODE_CASE_)
#undef TO_DECODE_CASE_
  }
  return invalid_argument("layer '{}': op kind {} is not in the op table", layer, static_cast<int>(kind));
}

}  // namespace tensoracle
