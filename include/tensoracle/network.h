// Network: the graph a model package defines (docs/network.md).
//
//   Network net;
//   Tensor x = net.add_input("image", DataType::kFloat32, {1, 3, -1, -1});
//   Tensor y = net.convolution(x, net.weight(weights, "conv1.weight"), net.weight(weights, "conv1.bias"),
//                              ConvolutionAttributes().set_padding({1, 1}).set_name("conv1"));
//   net.mark_output(net.relu(y), "features");
//   TO_RETURN_IF_ERROR(net.status());
//
// Every layer method infers its output types and shapes when it is called. Errors are sticky: the
// first one (naming the layer, the tensor and the bad value) is kept in status(), the failing
// method returns an invalid Tensor, and layers given an invalid Tensor quietly return another, so
// a graph function can be written straight through and check status() once at the end.
//
// Strong typing: a layer's precision is decided by the types of the tensors it receives; layers
// do not promote types implicitly (use cast). Dims of -1 are dynamic; they propagate through
// inference and are resolved by a backend when concrete input shapes are known.
//
// Nodes are stored in definition order, which is a topological order (a layer can only use
// tensors that already exist). Inspection (node(), tensor()) and the canonical form
// (canonical_form(), structural_hash()) expose the graph generically to passes and backends.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "tensoracle/array.h"
#include "tensoracle/layers.h"
#include "tensoracle/plugin_registry.h"
#include "tensoracle/status.h"
#include "tensoracle/types.h"

namespace tensoracle {

class Weights;

// A handle to a tensor of one Network (an index; cheap to copy).
struct Tensor {
  static constexpr uint32_t kInvalid = 0xFFFFFFFFu;
  uint32_t id = kInvalid;
  bool valid() const { return id != kInvalid; }
  bool operator==(const Tensor& other) const { return id == other.id; }
  bool operator!=(const Tensor& other) const { return id != other.id; }
};

struct TensorDesc {
  DataType dtype = DataType::kFloat32;
  Dims shape;
  bool operator==(const TensorDesc& o) const { return dtype == o.dtype && shape == o.shape; }
  std::string to_string() const;  // "fp32[1,3,-1,-1]"
};

// The serialized form of attributes: one AttributeValue per field of the op's attribute struct,
// keyed by the field's name. Enumerations are stored by their enum_name, data types by
// data_type_name (a list of them comma-separated), a list of shapes `<p>_shapes` as `<p>_ranks`
// and `<p>_dims`, and an unset optional field not at all, so dumps and the canonical form read
// naturally. Nodes hold the struct itself (Node::attributes<T>()); this form is for the
// canonical form, dumps, network_from_json and the generic add_layer of importers.
using AttributeValue =
    std::variant<bool, int64_t, double, std::string, std::vector<int64_t>, std::vector<double>>;
// Ordered by key: iteration order is canonical.
using AttributeMap = std::map<std::string, AttributeValue>;
std::string attribute_to_string(const AttributeValue& value);

// A struct's serialized form, through its field list.
AttributeMap to_attribute_map(const OpAttributes& attributes);
// The struct of `kind` from its serialized form: absent keys keep the struct's defaults; an
// unknown key, a value of the wrong type or an unknown enumeration name is an error naming the
// layer, the attribute and the value.
Result<OpAttributes> attributes_from_map(OpKind kind, const AttributeMap& map, const std::string& layer);

// The bytes of a constant and what keeps them alive (an owned HostArray or a mapped Weights).
struct ConstantData {
  ArrayView view;
  std::shared_ptr<const void> owner;
  std::string content_sha256;  // SHA-256 over dtype name, shape and bytes: the weight identity
  std::string source;          // "weights:<name>" or "" for constants built in code
};

struct TensorInfo {
  std::string name;
  TensorDesc desc;
  int64_t producer = -1;  // node index; -1 for a network input
  int output_index = 0;   // which output of the producer
};

struct Node {
  OpKind kind = OpKind::kConstant;
  std::string name;
  std::vector<Tensor> inputs;  // an invalid Tensor marks an omitted optional input
  std::vector<Tensor> outputs;
  // The attribute struct of `kind` (its name is the node's), as the layer's definition stored it.
  OpAttributes op_attributes;
  std::shared_ptr<const ConstantData> constant;  // kConstant only

  // The attribute struct; nullptr when T is not this node's op's struct.
  //   if (const auto* conv = node.attributes<ConvolutionAttributes>()) ... conv->groups ...
  template <typename T>
  const T* attributes() const {
    return std::get_if<T>(&op_attributes);
  }
  AttributeMap attribute_map() const { return to_attribute_map(op_attributes); }
};

struct TopKOutputs {
  Tensor values;
  Tensor indices;
};

class Network {
 public:
  Network();
  ~Network();
  Network(const Network&);
  Network& operator=(const Network&);
  Network(Network&&) noexcept;
  Network& operator=(Network&&) noexcept;

  // The first definition error, or ok.
  Status status() const;

  // ---- tensors ----
  Tensor add_input(std::string name, DataType dtype, Dims shape);
  // A constant owning `array` (the layer is named `name` when given).
  Tensor add_constant(HostArray array, std::string name = "");
  // A constant borrowing `view`, kept alive by `owner`.
  Tensor add_constant(const ArrayView& view, std::shared_ptr<const void> owner, std::string name = "",
                      std::string source = "");
  // The tensor `name` of `weights` as a constant named `name` (zero-copy; keeps the mapping
  // alive). The same name twice returns the same tensor.
  Tensor weight(const Weights& weights, const std::string& name);
  // Names a tensor (names are unique within a network).
  void set_tensor_name(Tensor tensor, std::string name);
  // Marks a network output; a non-empty `name` renames the tensor first.
  void mark_output(Tensor tensor, std::string name = "");

  // ---- layers (docs/ops.md describes each) ----
  Tensor convolution(Tensor input, Tensor weight, Tensor bias, const ConvolutionAttributes& attrs = {});
  Tensor deconvolution(Tensor input, Tensor weight, Tensor bias, const DeconvolutionAttributes& attrs = {});
  Tensor matmul(Tensor a, Tensor b, const MatMulAttributes& attrs = {});
  Tensor elementwise(Tensor a, Tensor b, const ElementwiseAttributes& attrs);
  Tensor unary(Tensor input, const UnaryAttributes& attrs);
  Tensor activation(Tensor input, const ActivationAttributes& attrs);
  Tensor softmax(Tensor input, const SoftmaxAttributes& attrs = {});
  Tensor reduce(Tensor input, const ReduceAttributes& attrs);
  Tensor layer_norm(Tensor input, Tensor scale, Tensor bias, const LayerNormAttributes& attrs = {});
  Tensor rms_norm(Tensor input, Tensor scale, const RmsNormAttributes& attrs = {});
  Tensor group_norm(Tensor input, Tensor scale, Tensor bias, const GroupNormAttributes& attrs);
  Tensor instance_norm(Tensor input, Tensor scale, Tensor bias, const InstanceNormAttributes& attrs = {});
  Tensor batch_norm(Tensor input, Tensor scale, Tensor bias, Tensor mean, Tensor variance,
                    const BatchNormAttributes& attrs = {});
  Tensor pooling(Tensor input, const PoolingAttributes& attrs);
  Tensor resize(Tensor input, const ResizeAttributes& attrs);
  Tensor reshape(Tensor input, const ReshapeAttributes& attrs);
  Tensor transpose(Tensor input, const TransposeAttributes& attrs);
  Tensor concat(const std::vector<Tensor>& inputs, const ConcatAttributes& attrs = {});
  Tensor slice(Tensor input, const SliceAttributes& attrs);
  Tensor pad(Tensor input, const PadAttributes& attrs);
  Tensor gather(Tensor data, Tensor indices, const GatherAttributes& attrs = {});
  // int64 [0, 1, ..., n-1], n = like's dim `axis` (known only at run time for a dynamic dim): the
  // positions of a sequence, and the indices that broadcast or slice to a dynamic size.
  Tensor iota(Tensor like, const IotaAttributes& attrs = {});
  Tensor grid_sample(Tensor input, Tensor grid, const GridSampleAttributes& attrs = {});
  Tensor select(Tensor condition, Tensor a, Tensor b, const SelectAttributes& attrs = {});
  TopKOutputs top_k(Tensor input, const TopKAttributes& attrs);
  // `mask` may be invalid (none); a bool mask keeps positions where it is true, any other mask is
  // added to the scores.
  Tensor attention(Tensor q, Tensor k, Tensor v, Tensor mask, const AttentionAttributes& attrs = {});
  Tensor quantize(Tensor input, Tensor scale, const QuantizeAttributes& attrs = {});
  Tensor dequantize(Tensor input, Tensor scale, const DequantizeAttributes& attrs = {});
  Tensor cast(Tensor input, const CastAttributes& attrs);
  // A plugin layer as recorded (the node's outputs given in `attrs`; network_from_json uses it).
  std::vector<Tensor> plugin(const std::vector<Tensor>& inputs, const PluginAttributes& attrs);
  // A plugin layer resolved through plugins(): the plugin of `identity` is made from `parameters`
  // (its serialized bytes), must accept each input's type in the LINEAR format, and gives the
  // outputs' types and shapes (copied from an input, or computed: then they must be static). The
  // errors name the layer and the plugin.
  std::vector<Tensor> plugin(const std::vector<Tensor>& inputs, const PluginIdentity& identity,
                             std::string_view parameters, std::string layer_name = {});

  // The plugins this network's plugin layers resolve through (plugin_registry.h). The builder
  // sets EngineBuild::plugins before it calls the graph function; an engine's network gets the
  // plugins the engine was opened with. Backends make their plugins from them.
  void set_plugins(PluginRegistry plugins);
  const PluginRegistry& plugins() const;

  // Shorthands.
  Tensor add(Tensor a, Tensor b) { return elementwise(a, b, ElementwiseAttributes().set_op(ElementwiseOp::kAdd)); }
  Tensor sub(Tensor a, Tensor b) { return elementwise(a, b, ElementwiseAttributes().set_op(ElementwiseOp::kSub)); }
  Tensor mul(Tensor a, Tensor b) { return elementwise(a, b, ElementwiseAttributes().set_op(ElementwiseOp::kMul)); }
  Tensor div(Tensor a, Tensor b) { return elementwise(a, b, ElementwiseAttributes().set_op(ElementwiseOp::kDiv)); }
  Tensor relu(Tensor x) { return activation(x, ActivationAttributes().set_kind(ActivationKind::kRelu)); }
  Tensor gelu(Tensor x) { return activation(x, ActivationAttributes().set_kind(ActivationKind::kGeluErf)); }
  Tensor cast(Tensor x, DataType type) { return cast(x, CastAttributes().set_output_type(type)); }

  // Generic forms of every layer method: inputs (invalid = omitted optional input) and the
  // attributes, as a struct (the op kind is the struct's, the layer name its `name`) or in their
  // serialized form (attributes_from_map's errors become the network's). Used by passes,
  // importers and deserializers; they return the outputs, empty on error. Constants are added
  // with add_constant (they need their bytes).
  std::vector<Tensor> add_layer(std::vector<Tensor> inputs, OpAttributes attributes);
  std::vector<Tensor> add_layer(OpKind kind, std::vector<Tensor> inputs, const AttributeMap& attributes,
                                std::string name = "");

  // ---- inspection ----
  size_t num_nodes() const;
  const Node& node(size_t index) const;
  size_t num_tensors() const;
  const TensorInfo& tensor(Tensor tensor) const;  // precondition: tensor belongs to this network
  const std::vector<Tensor>& inputs() const;
  const std::vector<Tensor>& outputs() const;
  Result<Tensor> find_tensor(const std::string& name) const;
  Result<size_t> find_node(const std::string& name) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// ---- canonical form, structural hash, dumps ----

// A deterministic text serialization of everything that affects the network's results: inputs
// (name, type, shape), the layers that contribute to an output in a canonical topological order
// (kind, attributes, input references, output types and shapes), constants by content hash, and
// the outputs by name. Layer names and internal tensor names are not part of it, nor is the
// order in which independent layers were defined, nor layers that reach no output.
// Errors when the network has a definition error.
Result<std::string> canonical_form(const Network& network);
// SHA-256 (hex) of canonical_form: the graph's identity in cache keys.
Result<std::string> structural_hash(const Network& network);

// Human-readable listing: inputs, one line per layer (name, kind, attributes, inputs -> outputs
// with types and shapes), outputs.
std::string to_text(const Network& network);
// The same as JSON: {"inputs": [...], "layers": [...], "outputs": [...]}.
std::string to_json(const Network& network, int indent = 2);

// The bytes of a constant when a network is read back: given the layer name, its "source"
// ("weights:<name>" or "") and its recorded SHA-256, a view plus what keeps it alive.
struct ConstantBytes {
  ArrayView view;
  std::shared_ptr<const void> owner;
};
using ConstantResolver =
    std::function<Result<ConstantBytes>(const std::string& layer, const std::string& source, const std::string& sha256)>;

// Rebuilds a network from to_json's output through add_layer (so inference re-checks every
// layer). Each constant's bytes come from `constants` and must match the recorded SHA-256.
Result<Network> network_from_json(const std::string& json, const ConstantResolver& constants);

}  // namespace tensoracle
