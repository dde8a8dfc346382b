// network_from_onnx and check_onnx_model (onnx.h): the graph's structure checked (names produced
// twice, inputs nobody produces, cycles), initializers and inputs read, nodes converted in a
// topological order, outputs marked.
#include <algorithm>
#include <deque>
#include <map>
#include <set>

#include "core/quoted.h"
#include "frontends/onnx/external_data.h"
#include "frontends/onnx/fold.h"
#include "frontends/onnx/model_file.h"
#include "frontends/onnx/node_context.h"
#include "frontends/onnx/op_table.h"
#include "passes/passes.h"
#include "tensoracle/onnx.h"

namespace tensoracle::onnx_import {
namespace {

// The largest dim a graph input may declare: far above any real model, far below overflow.
constexpr int64_t kMaxInputDim = int64_t{1} << 40;

// The largest static tensor one node may make (4 GiB): far above the activations of real models
// with static shapes, and a bound on the shapes read from a model's values -- a Pad's pads, Tile's
// repeats, the sizes of Expand and Resize -- which a hostile model could otherwise set so that
// building or running the engine allocates without limit.
constexpr int64_t kMaxTensorBytes = int64_t{1} << 32;

// Where each refused node's outputs came from, so that their consumers can say so (check mode).
using Refused = std::map<std::string, std::string>;  // value name -> refused node's name

class GraphImporter {
 public:
  GraphImporter(const ModelFile& file, std::string path, OnnxSupportReport* report)
      : file_(file), graph_(file.model->graph()), path_(std::move(path)), report_(report), external_(path_), values_(net_, file.model, external_) {}

  Result<ImportedModel> run() {
    TO_RETURN_IF_ERROR(model_problem(check_opset()));
    TO_RETURN_IF_ERROR(model_problem(read_initializers()));
    TO_RETURN_IF_ERROR(model_problem(read_inputs()));
    TO_ASSIGN_OR_RETURN(const std::vector<int> order, checked(topological_order()));
    name_nodes();
    for (int index : order) TO_RETURN_IF_ERROR(convert(index));
    if (report_ == nullptr || (refused_.empty() && stopped_at_.empty())) TO_RETURN_IF_ERROR(model_problem(mark_outputs()));
    // The layers of folded nodes, and constants only read at import, are left unused.
    TO_ASSIGN_OR_RETURN(Network live, passes::remove_dead_layers(net_));
    ImportedModel out{std::move(live), std::move(inputs_), path_, file_.sha256, file_.opset, ""};
    const onnx::ModelProto& model = *file_.model;
    out.producer = model.producer_name() + (model.producer_version().empty() ? "" : " " + model.producer_version());
    return out;
  }

 private:
  std::string where() const { return fmt::format("ONNX model '{}'", path_); }

  // In check mode a model problem is recorded and stops the import (nothing else can be trusted);
  // otherwise it is the error.
  Status model_problem(Status status) {
    if (status.is_ok() || report_ == nullptr) return status;
    report_->model_problems.push_back(status.message());
    return status;
  }
  template <typename T>
  Result<T> checked(Result<T> result) {
    if (!result.is_ok()) TO_RETURN_IF_ERROR(model_problem(result.status()));
    return result;
  }

  Status check_opset() const {
    if (file_.opset == 0) return unsupported("{}: it imports no opset of the default domain (ai.onnx)", where());
    if (file_.opset < kOldestOpset)
      return unsupported("{}: default-domain opset {} is older than {}, the oldest read (convert it with "
                         "onnx.version_converter)",
                         where(), file_.opset, kOldestOpset);
    return Status::ok();
  }

  Status claim(const std::string& name, const std::string& what) {
    if (name.empty()) return invalid_argument("{}: {} has an empty name", where(), what);
    // Names become layer and tensor names, which engine files store as JSON.
    if (!is_utf8(name)) return invalid_argument("{}: {} is named {}, which is not valid UTF-8", where(), what, quote(name));
    const auto [it, inserted] = producers_.emplace(name, what);
    if (!inserted) return invalid_argument("{}: the value '{}' is produced twice: by {} and by {}", where(), name, it->second, what);
    return Status::ok();
  }

  Status read_initializers() {
    if (graph_.sparse_initializer_size() > 0)
      return unsupported("{}: sparse initializers ('{}') are not supported", where(), graph_.sparse_initializer(0).values().name());
    for (const onnx::TensorProto& init : graph_.initializer()) {
      const std::string what = fmt::format("initializer '{}'", init.name());
      TO_RETURN_IF_ERROR(claim(init.name(), what));
      TO_ASSIGN_OR_RETURN(ConstantValue value, constant_from_tensor(init, file_.model, external_, fmt::format("{}: {}", where(), what)));
      values_.set(init.name(), Value{Tensor{}, std::make_shared<ConstantValue>(std::move(value)), init.name(), nullptr});
      used_layer_names_.insert(init.name());
    }
    return Status::ok();
  }

  Status read_inputs() {
    for (const onnx::ValueInfoProto& input : graph_.input()) {
      // Before IR version 4 initializers were listed as inputs too: they are constants.
      if (values_.contains(input.name())) continue;
      const std::string what = fmt::format("{}: graph input '{}'", where(), input.name());
      TO_RETURN_IF_ERROR(claim(input.name(), fmt::format("graph input '{}'", input.name())));
      if (!input.type().has_tensor_type()) return unsupported("{}: only tensor inputs are supported", what);
      const onnx::TypeProto::Tensor& type = input.type().tensor_type();
      const std::optional<DataType> dtype = data_type_of_onnx(type.elem_type());
      if (!dtype) return unsupported("{}: data type {} is not supported", what, onnx_type_name(type.elem_type()));
      if (!type.has_shape()) return unsupported("{}: its rank is unknown (no shape); declare one in the model", what);
      if (static_cast<size_t>(type.shape().dim_size()) > Dims::kMaxRank)
        return invalid_argument("{}: rank {} exceeds the maximum {}", what, type.shape().dim_size(), Dims::kMaxRank);
      OnnxInput declared{input.name(), *dtype, {}, {}};
      std::vector<int64_t> dims;
      for (const onnx::TensorShapeProto::Dimension& dim : type.shape().dim()) {
        if (dim.has_dim_value()) {
          if (dim.dim_value() < 0 || dim.dim_value() > kMaxInputDim)
            return invalid_argument("{}: dim {} is {}; expected 0..{} or a symbolic dim", what, dims.size(), dim.dim_value(),
                                    kMaxInputDim);
          dims.push_back(dim.dim_value());
          declared.dim_names.emplace_back();
        } else {
          dims.push_back(Dims::kDynamic);
          declared.dim_names.push_back(dim.dim_param());
        }
      }
      declared.shape = Dims(dims);
      if (declared.shape.is_static())
        if (auto bytes = declared.shape.byte_size(*dtype); !bytes.is_ok()) return bytes.status().with_context(what);
      const Tensor t = net_.add_input(input.name(), *dtype, declared.shape);
      if (!net_.status().is_ok()) return net_.status().with_context(what);
      values_.set(input.name(), Value{t, nullptr, "", nullptr});
      values_.symbols().name_input(t, input.name(), declared.dim_names, declared.shape);
      inputs_.push_back(std::move(declared));
    }
    return Status::ok();
  }

  std::string node_label(int index) const {
    const onnx::NodeProto& node = graph_.node(index);
    return node.name().empty() ? fmt::format("#{} ({})", index, node.op_type()) : fmt::format("'{}'", node.name());
  }

  // Kahn's algorithm over value names; what is left is on a cycle (or behind one).
  Result<std::vector<int>> topological_order() {
    const int n = graph_.node_size();
    for (int i = 0; i < n; ++i)
      for (const std::string& out : graph_.node(i).output())
        if (!out.empty()) TO_RETURN_IF_ERROR(claim(out, fmt::format("node {}", node_label(i))));
    std::map<std::string, int> producer;
    for (int i = 0; i < n; ++i)
      for (const std::string& out : graph_.node(i).output()) producer[out] = i;
    std::vector<int> pending(static_cast<size_t>(n), 0);
    std::vector<std::vector<int>> consumers(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      for (const std::string& in : graph_.node(i).input()) {
        if (in.empty()) continue;
        const auto p = producer.find(in);
        if (p != producer.end()) {
          ++pending[static_cast<size_t>(i)];
          consumers[static_cast<size_t>(p->second)].push_back(i);
        } else if (!values_.contains(in)) {
          return invalid_argument("{}: node {} ({}) reads '{}', which no node, initializer or graph input produces", where(),
                                  node_label(i), graph_.node(i).op_type(), in);
        }
      }
    }
    std::deque<int> ready;
    for (int i = 0; i < n; ++i)
      if (pending[static_cast<size_t>(i)] == 0) ready.push_back(i);
    std::vector<int> order;
    while (!ready.empty()) {
      const int i = ready.front();
      ready.pop_front();
      order.push_back(i);
      for (int c : consumers[static_cast<size_t>(i)])
        if (--pending[static_cast<size_t>(c)] == 0) ready.push_back(c);
    }
    if (static_cast<int>(order.size()) != n) {
      std::vector<std::string> stuck;
      for (int i = 0; i < n && stuck.size() < 5; ++i)
        if (pending[static_cast<size_t>(i)] > 0) stuck.push_back(node_label(i));
      return invalid_argument("{}: the graph has a cycle: {} node(s) wait on each other (among them {})", where(),
                              n - static_cast<int>(order.size()), fmt::join(stuck, ", "));
    }
    return order;
  }

  // Layer names: the node's name when it has a unique one, else "<op>_<index>".
  void name_nodes() {
    for (int i = 0; i < graph_.node_size(); ++i) {
      const onnx::NodeProto& node = graph_.node(i);
      std::string name = node.name();
      if (name.empty() || !is_utf8(name) || used_layer_names_.count(name)) name = fmt::format("{}_{}", node.op_type(), i);
      while (used_layer_names_.count(name)) name += "_";
      used_layer_names_.insert(name);
      layer_names_.push_back(name);
    }
  }

  Status refuse_node(int index, const std::string& reason) {
    const onnx::NodeProto& node = graph_.node(index);
    for (const std::string& out : node.output()) refused_[out] = layer_names_[static_cast<size_t>(index)];
    record(index, false, reason);
    return Status::ok();
  }

  void record(int index, bool supported, std::string reason) {
    const onnx::NodeProto& node = graph_.node(index);
    nodes_[index] = OnnxNodeSupport{layer_names_[static_cast<size_t>(index)], node.op_type(), node.domain(), supported,
                                    std::move(reason)};
  }

  Status convert(int index) {
    const onnx::NodeProto& node = graph_.node(index);
    const std::string& name = layer_names_[static_cast<size_t>(index)];
    NodeContext ctx(node, name, file_.opset, values_);
    if (report_ != nullptr) {
      if (!stopped_at_.empty()) return refuse_node(index, fmt::format("not checked: the network stopped at node '{}'", stopped_at_));
      for (const std::string& in : node.input())
        if (const auto r = refused_.find(in); r != refused_.end())
          return refuse_node(index, fmt::format("reads '{}' of the refused node '{}'", in, r->second));
    }
    const size_t first_layer = net_.num_nodes();
    Status status = Status::ok();
    ConvertFn converter = (node.domain().empty() || node.domain() == "ai.onnx") ? find_converter(node.op_type()) : nullptr;
    if (converter != nullptr && reads_a_shape_value(node))
      if (const ConvertFn on_shapes = find_shape_value_converter(node.op_type())) converter = on_shapes;
    if (converter == nullptr) {
      status = ctx.refuse("{}", node.domain().empty() || node.domain() == "ai.onnx"
                                    ? "the op is not supported"
                                    : fmt::format("the domain '{}' is not supported", node.domain()));
    } else {
      status = converter(ctx);
      if (status.is_ok()) {
        const std::string unread = ctx.unread_attribute();
        if (!unread.empty()) status = ctx.refuse("attribute '{}' is not supported", unread);
      }
      if (status.is_ok()) status = ctx.network_status();
      if (status.is_ok()) status = check_output_sizes(ctx, first_layer);
      if (status.is_ok())
        for (const std::string& out : node.output())
          if (!out.empty() && !values_.contains(out))
            status = ctx.refuse("output '{}' is not supported", out);
      if (status.is_ok() && reads_only_constants(node)) status = fold(ctx, first_layer);
      if (status.is_ok()) values_.symbols().propagate(net_, first_layer);
    }
    if (report_ == nullptr) return status;
    if (status.is_ok()) {
      record(index, true, "");
      return Status::ok();
    }
    if (!net_.status().is_ok()) stopped_at_ = name;
    return refuse_node(index, status.message());
  }

  bool reads_only_constants(const onnx::NodeProto& node) const {
    bool any = false;
    for (const std::string& in : node.input()) {
      if (in.empty()) continue;
      const Value* value = values_.find(in);
      if (value == nullptr || !value->constant) return false;
      any = true;
    }
    return any;
  }

  // Refuses the node when a layer it added makes a static tensor over kMaxTensorBytes, before
  // anything sized by it is built.
  Status check_output_sizes(const NodeContext& ctx, size_t first_layer) const {
    for (size_t i = first_layer; i < net_.num_nodes(); ++i) {
      for (Tensor t : net_.node(i).outputs) {
        const TensorDesc& desc = net_.tensor(t).desc;
        if (!desc.shape.is_static()) continue;
        const Result<int64_t> bytes = desc.shape.byte_size(desc.dtype);
        if (!bytes.is_ok() || *bytes > kMaxTensorBytes)
          return ctx.refuse("the output {} of layer '{}' would hold {} bytes, over the {} this importer allows one tensor",
                            desc.to_string(), net_.node(i).name, bytes.is_ok() ? std::to_string(*bytes) : "over 2^63",
                            kMaxTensorBytes);
      }
    }
    return Status::ok();
  }

  // Whether the node reads a shape value: its op then computes on shape values when it can.
  bool reads_a_shape_value(const onnx::NodeProto& node) const {
    for (const std::string& in : node.input()) {
      const Value* value = in.empty() ? nullptr : values_.find(in);
      if (value != nullptr && value->shape) return true;
    }
    return false;
  }

  // Computes the outputs of a node that reads only constants (fold.h); they become constants.
  Status fold(NodeContext& ctx, size_t first_layer) {
    const onnx::NodeProto& node = ctx.node();
    std::vector<int> indices;
    std::vector<Tensor> tensors;
    for (int i = 0; i < node.output_size(); ++i) {
      const Value* value = values_.find(node.output(i));
      if (node.output(i).empty() || value == nullptr || value->constant) continue;
      indices.push_back(i);
      tensors.push_back(value->tensor);
    }
    if (tensors.empty()) return Status::ok();
    auto folded = evaluate_constant_layers(net_, first_layer, tensors);
    if (!folded.is_ok()) return folded.status().with_context(ctx.where() + ": evaluating it at import");
    if (!folded->has_value()) return Status::ok();
    for (size_t k = 0; k < indices.size(); ++k) {
      const std::string name = indices.size() == 1 ? ctx.layer_name() + ":folded"
                                                   : fmt::format("{}:folded:{}", ctx.layer_name(), indices[k]);
      values_.set(node.output(indices[k]), Value{Tensor{}, (**folded)[k], name, nullptr});
    }
    return Status::ok();
  }

  Status mark_outputs() {
    std::set<uint32_t> marked;
    for (const onnx::ValueInfoProto& output : graph_.output()) {
      Tensor t = values_.tensor(output.name());
      if (const std::string why = values_.shape_dependence(output.name()); !why.empty())
        return unsupported("{}: graph output {}; an output computed from shapes is not supported", where(), why);
      if (!t.valid())
        return invalid_argument("{}: graph output '{}' is produced by no node, initializer or input", where(), output.name());
      // A graph input, or a value that is already an output, becomes an output of its own.
      if (net_.tensor(t).producer < 0 || marked.count(t.id)) t = copy_of(net_, t, "output:" + output.name());
      marked.insert(t.id);
      net_.mark_output(t, output.name());
      if (!net_.status().is_ok())
        return net_.status().with_context(fmt::format("{}: graph output '{}'", where(), output.name()));
    }
    if (graph_.output_size() == 0) return invalid_argument("{}: the graph has no outputs", where());
    return Status::ok();
  }

 public:
  std::map<int, OnnxNodeSupport> nodes_;

 private:
  const ModelFile& file_;
  const onnx::GraphProto& graph_;
  std::string path_;
  OnnxSupportReport* report_;
  Network net_;
  ExternalDataFiles external_;
  ValueTable values_;
  std::vector<OnnxInput> inputs_;
  std::map<std::string, std::string> producers_;  // value name -> what produces it
  std::set<std::string> used_layer_names_;
  std::vector<std::string> layer_names_;
  Refused refused_;
  std::string stopped_at_;
};

}  // namespace

Result<ImportedModel> import_model(const ModelFile& file, const std::string& path) {
  return GraphImporter(file, path, nullptr).run();
}

Result<OnnxSupportReport> check_model(const ModelFile& file, const std::string& path) {
  OnnxSupportReport report;
  report.path = path;
  report.opset = file.opset;
  GraphImporter importer(file, path, &report);
  (void)importer.run();  // its problems are in the report
  for (auto& [index, node] : importer.nodes_) report.nodes.push_back(std::move(node));
  return report;
}

}  // namespace tensoracle::onnx_import

namespace tensoracle {

Result<ImportedModel> network_from_onnx(const std::string& path) {
  TO_ASSIGN_OR_RETURN(const onnx_import::ModelFile file, onnx_import::read_model_file(path));
  return onnx_import::import_model(file, path);
}

bool OnnxSupportReport::importable() const {
  return model_problems.empty() &&
         std::all_of(nodes.begin(), nodes.end(), [](const OnnxNodeSupport& n) { return n.supported; });
}

Result<OnnxSupportReport> check_onnx_model(const std::string& path) {
  TO_ASSIGN_OR_RETURN(const onnx_import::ModelFile file, onnx_import::read_model_file(path));
  return onnx_import::check_model(file, path);
}

}  // namespace tensoracle
