// The layer methods of Network, generated from the op table (TENSORACLE_OP_KINDS) and each
// attribute struct's field list (visit_fields, include/tensoracle/layers.h): one method per op
// kind, named after it, taking the layer's input Tensors positionally and its attributes as
// keyword arguments named after the struct's fields, plus `name` for the layer. Nothing here
// restates a field or a default: a field added to a struct appears in Python, in its stub
// signature (built from the field's type and default) and in its error messages at once.
//
//   y = net.convolution(x, w, None, stride=[2, 2], pre_padding=[1, 1], post_padding=[1, 1], name="conv1")
//   values, indices = net.top_k(scores, k=5)
//
// The plugin layer is the exception: its method mirrors C++ Network::plugin (bind_plugin_layer).
#include <nanobind/stl/string.h>

#include <algorithm>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "arrays.h"
#include "errors.h"
#include "network.h"
#include "tensoracle/layers.h"

namespace nb = nanobind;

namespace tensoracle::python {
namespace {

template <typename T>
struct is_vector : std::false_type {};
template <typename T>
struct is_vector<std::vector<T>> : std::true_type {};
template <typename T>
struct is_optional : std::false_type {};
template <typename T>
struct is_optional<std::optional<T>> : std::true_type {};

// A field's value from Python, to Python, and its type as a stub writes it.
template <typename T>
struct FieldCodec {
  static T from_python(nb::handle value, const std::string& what) {
    if constexpr (std::is_same_v<T, bool>) {
      if (!PyBool_Check(value.ptr())) fail(what + ": expected a bool, got " + python_repr(value));
      return value.is(Py_True);
    } else if constexpr (std::is_same_v<T, int64_t>) {
      if (PyBool_Check(value.ptr()) || !nb::hasattr(value, "__index__")) fail(what + ": expected an int, got " + python_repr(value));
      return nb::cast<int64_t>(value.attr("__index__")());
    } else if constexpr (std::is_same_v<T, double>) {
      if (PyBool_Check(value.ptr()) || !nb::hasattr(value, "__float__")) fail(what + ": expected a number, got " + python_repr(value));
      return nb::cast<double>(value.attr("__float__")());
    } else if constexpr (std::is_same_v<T, std::string>) {
      if (!nb::isinstance<nb::str>(value)) fail(what + ": expected a str, got " + python_repr(value));
      return nb::cast<std::string>(value);
    } else if constexpr (std::is_same_v<T, DataType>) {
      return data_type_from_python(value, what);
    } else if constexpr (std::is_same_v<T, Dims>) {
      return dims_from_python(value, what);
    } else if constexpr (std::is_enum_v<T>) {
      if (!nb::isinstance<nb::str>(value)) fail(what + ": expected one of " + names() + ", got " + python_repr(value));
      const auto parsed = parse_enum<T>(nb::cast<std::string>(value));
      if (!parsed) fail(what + ": " + python_repr(value) + " is not one of " + names());
      return *parsed;
    } else if constexpr (is_optional<T>::value) {
      if (value.is_none()) return std::nullopt;
      return FieldCodec<typename T::value_type>::from_python(value, what);
    } else {
      static_assert(is_vector<T>::value, "a field type the bindings do not know");
      if (nb::isinstance<nb::str>(value) || !nb::hasattr(value, "__iter__"))
        fail(what + ": expected a sequence, got " + python_repr(value));
      T out;
      size_t i = 0;
      for (nb::handle item : nb::iter(value))
        out.push_back(FieldCodec<typename T::value_type>::from_python(item, what + "[" + std::to_string(i++) + "]"));
      return out;
    }
  }

  static nb::object to_python(const T& value) {
    if constexpr (std::is_same_v<T, DataType>) {
      return nb::str(std::string(data_type_name(value)).c_str());
    } else if constexpr (std::is_same_v<T, Dims>) {
      return shape_tuple(value);
    } else if constexpr (std::is_enum_v<T>) {
      return nb::str(std::string(enum_name(value)).c_str());
    } else if constexpr (is_optional<T>::value) {
      return value ? FieldCodec<typename T::value_type>::to_python(*value) : nb::none();
    } else if constexpr (is_vector<T>::value) {
      nb::list out;
      for (const auto& item : value) out.append(FieldCodec<typename T::value_type>::to_python(item));
      return out;
    } else {
      return nb::cast(value);
    }
  }

  static std::string stub_type() {
    if constexpr (std::is_same_v<T, bool>) return "bool";
    else if constexpr (std::is_same_v<T, int64_t>) return "int";
    else if constexpr (std::is_same_v<T, double>) return "float";
    else if constexpr (std::is_same_v<T, std::string>) return "str";
    else if constexpr (std::is_same_v<T, DataType>) return "str | numpy.typing.DTypeLike";
    else if constexpr (std::is_same_v<T, Dims>) return "collections.abc.Sequence[int]";
    else if constexpr (std::is_enum_v<T>) {
      std::string literal;
      for (std::string_view n : enum_names<T>()) literal += (literal.empty() ? "'" : ", '") + std::string(n) + "'";
      return "typing.Literal[" + literal + "]";
    } else if constexpr (is_optional<T>::value) {
      return FieldCodec<typename T::value_type>::stub_type() + " | None";
    } else {
      return "collections.abc.Sequence[" + FieldCodec<typename T::value_type>::stub_type() + "]";
    }
  }

  static std::string names() {
    std::string out;
    for (std::string_view n : enum_names<T>()) out += (out.empty() ? "'" : ", '") + std::string(n) + "'";
    return out;
  }
};

template <typename S, typename T>
T field_type_of(T S::*);

// A field's keyword in Python: its name, or with a trailing '_' where the name is a Python
// keyword (PoolingAttributes::global is `global_=`).
std::string keyword_of(const char* field) {
  // Asked once per field (under the GIL); no Python object outlives the call, so none is left
  // for static destructors after the interpreter is gone.
  static std::map<std::string, std::string> keywords;
  auto it = keywords.find(field);
  if (it == keywords.end()) {
    const bool reserved = nb::cast<bool>(nb::module_::import_("keyword").attr("iskeyword")(field));
    it = keywords.emplace(field, std::string(field) + (reserved ? "_" : "")).first;
  }
  return it->second;
}

// The attribute struct of one layer call: keyword arguments by field name, `name` the layer's.
template <typename A>
A attributes_from_kwargs(const std::string& method, nb::handle kwargs) {
  A attributes;
  std::vector<std::string> fields;
  size_t used = 0;
  const nb::dict given = nb::cast<nb::dict>(kwargs);
  A::visit_fields([&](const char* field, auto member) {
    const std::string keyword = keyword_of(field);
    fields.push_back(keyword);
    if (!given.contains(keyword.c_str())) return;
    using T = decltype(field_type_of(member));
    attributes.*member = FieldCodec<T>::from_python(given[keyword.c_str()], method + "(" + keyword + "=...)");
    ++used;
  });
  if (given.contains("name")) {
    attributes.name = FieldCodec<std::string>::from_python(given["name"], method + "(name=...)");
    ++used;
  }
  if (used != nb::len(given)) {
    std::string valid;
    for (const std::string& f : fields) valid += f + ", ";
    for (auto [key, value] : given) {
      const std::string k = nb::cast<std::string>(key);
      if (k != "name" && std::find(fields.begin(), fields.end(), k) == fields.end())
        fail(method + ": no attribute '" + k + "' (attributes: " + valid + "name)");
    }
  }
  return attributes;
}

// Stable storage for the names and signatures handed to nanobind.
std::deque<std::string>& strings() {
  static std::deque<std::string> storage;
  return storage;
}
const char* keep(std::string text) { return strings().emplace_back(std::move(text)).c_str(); }

// "def convolution(self, *inputs: Tensor | None, stride: collections.abc.Sequence[int] = [], ..., name: str = '') -> Tensor"
template <typename A>
std::string signature(const std::string& method, const std::string& returns) {
  std::string sig = "def " + method + "(self, *inputs: Tensor | None";
  const A defaults;
  A::visit_fields([&](const char* field, auto member) {
    using T = decltype(field_type_of(member));
    sig += ", " + keyword_of(field) + ": " + FieldCodec<T>::stub_type() + " = " +
           nb::cast<std::string>(nb::repr(FieldCodec<T>::to_python(defaults.*member)));
  });
  return sig + ", name: str = '') -> " + returns;
}

// Ops whose layer has several outputs return a tuple.
bool several_outputs(OpKind kind) { return kind == OpKind::kTopK || kind == OpKind::kPlugin; }

nb::tuple tensor_tuple(nb::handle self, const std::vector<Tensor>& tensors) {
  nb::list out;
  for (Tensor t : tensors) out.append(nb::cast(tensor_object(self, t)));
  return nb::tuple(out);
}

nb::object add_layer(nb::handle self, nb::handle args, OpAttributes attributes) {
  PyNetwork& network = nb::cast<PyNetwork&>(self);
  const OpKind kind = op_kind_of_attributes(attributes);
  std::vector<Tensor> inputs;
  size_t i = 0;
  for (nb::handle arg : nb::iter(args))
    inputs.push_back(tensor_of(self, arg, std::string(op_kind_name(kind)) + " input " + std::to_string(i++)));
  const std::vector<Tensor> outputs = network.get().add_layer(std::move(inputs), std::move(attributes));
  network.check_status();
  if (!several_outputs(kind) && outputs.size() == 1) return nb::cast(tensor_object(self, outputs.front()));
  return tensor_tuple(self, outputs);
}

// "test::scale_add" -> namespace "test", name "scale_add" (no "::": no namespace). Split at the
// last "::", so that plugin_qualified_name gives back exactly `qualified`, which is what the
// registry looks the plugin up by.
PluginIdentity identity_of(const std::string& qualified, const std::string& version) {
  PluginIdentity identity;
  identity.version = version;
  const size_t separator = qualified.rfind("::");
  if (separator == std::string::npos) {
    identity.name = qualified;
  } else {
    identity.plugin_namespace = qualified.substr(0, separator);
    identity.name = qualified.substr(separator + 2);
  }
  return identity;
}

// net.plugin([x, b], "test::scale_add", "1.0.0", parameters, name="scale_add"): C++
// Network::plugin(inputs, identity, parameters, name), resolved through the network's plugins
// (a build's plugins=, or Network(plugins=...)). It replaces the method the op table would
// generate from PluginAttributes: that is the layer's recorded form (hex parameters, output
// types and shapes the plugin itself gives), which engines keep, not a way to define one.
void bind_plugin_layer(nb::class_<PyNetwork>& cls) {
  cls.def("plugin", [](nb::handle self, nb::handle inputs, const std::string& plugin, const std::string& version,
                       nb::bytes parameters, const std::string& name) {
    if (nb::isinstance<nb::str>(inputs) || !nb::hasattr(inputs, "__iter__"))
      fail("plugin: inputs: expected a sequence of Tensors, got " + python_repr(inputs));
    std::vector<Tensor> tensors;
    size_t i = 0;
    for (nb::handle input : nb::iter(inputs)) {
      const std::string what = "plugin input " + std::to_string(i++);
      if (input.is_none()) fail(what + ": plugin inputs are required (None is not a Tensor)");
      tensors.push_back(tensor_of(self, input, what));
    }
    PyNetwork& network = nb::cast<PyNetwork&>(self);
    const std::vector<Tensor> outputs = network.get().plugin(
        tensors, identity_of(plugin, version), std::string_view(parameters.c_str(), parameters.size()), name);
    network.check_status();
    return tensor_tuple(self, outputs);
  }, nb::arg("inputs"), nb::arg("plugin"), nb::arg("version"), nb::arg("parameters") = nb::bytes(""), nb::kw_only(),
     nb::arg("name") = "",
     nb::sig("def plugin(self, inputs: collections.abc.Sequence[Tensor], plugin: str, version: str, parameters: bytes = "
             "b'', *, name: str = '') -> tuple[Tensor, ...]"),
     "A plugin layer (docs/plugins.md): the plugin `plugin` (qualified, \"namespace::name\") of `version`, made "
     "from `parameters` (its serialized bytes) by a library loaded into the network's plugins (the build's "
     "plugins=, or Network(plugins=...)). Returns its outputs, whose types and shapes the plugin gives.");
}

template <typename A>
void bind_layer(nb::class_<PyNetwork>& cls) {
  constexpr OpKind kind = op_kind_of<A>;
  const std::string method(op_kind_name(kind));
  const char* doc = keep("The " + method + " layer (docs/ops.md): input Tensors in order (None for an omitted optional "
                         "input), attributes by field name, `name` for the layer.");
  cls.def(keep(method), [method](nb::handle self, nb::args args, nb::kwargs kwargs) {
    return add_layer(self, args, attributes_from_kwargs<A>(method, kwargs));
  }, nb::sig(keep(signature<A>(method, several_outputs(kind) ? "tuple[Tensor, ...]" : "Tensor"))), doc);
}

// A layer with one attribute preset: net.add(a, b) is net.elementwise(a, b, op="add").
template <typename A, typename Setter>
void bind_shorthand(nb::class_<PyNetwork>& cls, const char* method, const char* like, Setter preset) {
  cls.def(keep(method), [method = std::string(method), preset](nb::handle self, nb::args args, const std::string& name) {
    A attributes;
    preset(attributes);
    attributes.name = name;
    return add_layer(self, args, std::move(attributes));
  }, nb::arg("inputs"), nb::kw_only(), nb::arg("name") = "",
     nb::sig(keep(std::string("def ") + method + "(self, *inputs: Tensor, name: str = '') -> Tensor")),
     keep(std::string("Shorthand for ") + like + "."));
}

}  // namespace

void bind_layers(nb::class_<PyNetwork>& cls) {
#define TO_BIND_LAYER_(Kind, name, Attributes, category) \
  if constexpr (OpKind::k##Kind != OpKind::kConstant && OpKind::k##Kind != OpKind::kPlugin) bind_layer<Attributes>(cls);
  TENSORACLE_OP_KINDS(TO_BIND_LAYER_)
#undef TO_BIND_LAYER_
  bind_plugin_layer(cls);
  bind_shorthand<ElementwiseAttributes>(cls, "add", "elementwise(a, b, op='add')", [](auto& a) { a.op = ElementwiseOp::kAdd; });
  bind_shorthand<ElementwiseAttributes>(cls, "sub", "elementwise(a, b, op='sub')", [](auto& a) { a.op = ElementwiseOp::kSub; });
  bind_shorthand<ElementwiseAttributes>(cls, "mul", "elementwise(a, b, op='mul')", [](auto& a) { a.op = ElementwiseOp::kMul; });
  bind_shorthand<ElementwiseAttributes>(cls, "div", "elementwise(a, b, op='div')", [](auto& a) { a.op = ElementwiseOp::kDiv; });
  bind_shorthand<ActivationAttributes>(cls, "relu", "activation(x, kind='relu')", [](auto& a) { a.kind = ActivationKind::kRelu; });
  bind_shorthand<ActivationAttributes>(cls, "gelu", "activation(x, kind='gelu_erf')", [](auto& a) { a.kind = ActivationKind::kGeluErf; });
}

}  // namespace tensoracle::python
