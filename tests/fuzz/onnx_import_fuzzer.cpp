// Structure-aware fuzzing of the ONNX importer, whose input (a model file) is untrusted. Each
// input is a serialized ModelProto; the custom mutator parses it and changes it the way a broken
// or hostile exporter would -- a node's op type swapped for another supported one, an attribute
// set to a boundary value or another type, an input renamed to another value or dropped, a dim of
// an initializer or graph input set to a boundary value, raw data cut short, a data type changed,
// an external data location aimed elsewhere -- or, one time in four, mutates the bytes. An input
// that does not parse is replaced by one of the small valid models built at start-up (an MLP, a
// convolution block, torch's view chain, an attention's heads split on dynamic dims, Q/DQ, einsum
// attention, ConstantOfShape/Range/Expand/Split, Resize/ConvTranspose), so the target needs no
// committed corpus. Each mutant is imported (folding runs the cpu reference on its constants) and
// checked; one that imports with small static inputs and small tensors is built into a cpu engine
// and run on zero inputs: nothing may crash, leak or misbehave under ASan/UBSan.
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "frontends/onnx/model_file.h"
#include "host/onnx/onnx_model_builder.h"
#include "tensoracle/build.h"
#include "tensoracle/engine.h"
#include "tensoracle/onnx.h"

using namespace tensoracle;
using namespace tensoracle::testing;

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace {

std::string floats(const std::vector<float>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
}

onnx::ModelProto mlp() {
  onnx::ModelProto m = onnx_model(17);
  add_input(m, "x", {-1, 4});
  add_initializer(m, "w", {4, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  add_initializer(m, "b", {3}, {0.5f, -1, 2});
  add_node(m, "MatMul", {"x", "w"}, {"xw"}, "matmul");
  add_node(m, "Add", {"xw", "b"}, {"h"}, "add");
  add_node(m, "Relu", {"h"}, {"r"}, "relu");
  add_int_attribute(add_node(m, "Softmax", {"r"}, {"y"}, "softmax"), "axis", -1);
  add_output(m, "y");
  return m;
}

onnx::ModelProto conv_block() {
  onnx::ModelProto m = onnx_model(17);
  add_input(m, "x", {1, 2, 6, 6});
  add_initializer(m, "w", {2, 2, 3, 3}, std::vector<float>(36, 0.25f));
  for (const char* p : {"scale", "shift", "mean", "var"}) add_initializer(m, p, {2}, {1.0f, 0.5f});
  onnx::NodeProto* conv = add_node(m, "Conv", {"x", "w"}, {"c"}, "conv");
  add_string_attribute(conv, "auto_pad", "SAME_UPPER");
  add_node(m, "BatchNormalization", {"c", "scale", "shift", "mean", "var"}, {"n"}, "bn");
  add_ints_attribute(add_node(m, "MaxPool", {"n"}, {"p"}, "pool"), "kernel_shape", {2, 2});
  add_node(m, "GlobalAveragePool", {"p"}, {"g"}, "gap");
  add_int_attribute(add_node(m, "Flatten", {"g"}, {"y"}, "flatten"), "axis", 1);
  add_output(m, "y");
  return m;
}

onnx::ModelProto view_chain() {
  onnx::ModelProto m = onnx_model(17);
  add_input(m, "x", {2, 3, 4});
  add_int64_initializer(m, "i0", {}, {0});
  add_int64_initializer(m, "i1", {}, {1});
  add_int64_initializer(m, "axes", {1}, {0});
  add_int64_initializer(m, "rest", {1}, {-1});
  add_node(m, "Shape", {"x"}, {"s"}, "shape");
  add_node(m, "Gather", {"s", "i0"}, {"n"}, "gather");
  add_node(m, "Unsqueeze", {"n", "axes"}, {"n1"}, "unsqueeze");
  add_int_attribute(add_node(m, "Concat", {"n1", "rest"}, {"target"}, "concat"), "axis", 0);
  add_node(m, "Reshape", {"x", "target"}, {"y"}, "reshape");
  add_output(m, "y");
  return m;
}

// The heads split of an attention on a dynamic batch and sequence: a Shape of a tensor with
// dynamic dims computed on (Gather, Unsqueeze, Mul, Concat) and read by a Reshape and an Expand.
onnx::ModelProto dynamic_heads() {
  onnx::ModelProto m = onnx_model(17);
  add_symbolic_input(m, "x", {"batch", "seq", "4"});
  add_int64_initializer(m, "i0", {}, {0});
  add_int64_initializer(m, "i1", {}, {1});
  add_int64_initializer(m, "axes", {1}, {0});
  add_int64_initializer(m, "heads", {2}, {2, 2});
  add_int64_initializer(m, "rest", {1}, {4});
  add_node(m, "Shape", {"x"}, {"s"}, "shape");
  add_node(m, "Gather", {"s", "i0"}, {"b"}, "batch");
  add_node(m, "Gather", {"s", "i1"}, {"t"}, "seq");
  add_node(m, "Unsqueeze", {"b", "axes"}, {"b1"}, "batch1");
  add_node(m, "Unsqueeze", {"t", "axes"}, {"t1"}, "seq1");
  add_node(m, "Mul", {"b1", "t1"}, {"bt"}, "tokens");
  add_int_attribute(add_node(m, "Concat", {"b1", "t1", "heads"}, {"split"}, "split"), "axis", 0);
  add_node(m, "Reshape", {"x", "split"}, {"h"}, "heads");
  add_int_attribute(add_node(m, "Concat", {"bt", "rest"}, {"flat"}, "flat"), "axis", 0);
  add_node(m, "Reshape", {"h", "flat"}, {"f"}, "merge");
  add_node(m, "Expand", {"x", "s"}, {"e"}, "expand");
  add_output(m, "f");
  add_output(m, "e");
  return m;
}

onnx::ModelProto qdq() {
  onnx::ModelProto m = onnx_model(19);
  add_input(m, "x", {2, 3});
  add_initializer(m, "scale", {3}, {0.1f, 1.0f, 2.0f});
  add_raw_initializer(m, "zero", onnx::TensorProto::INT8, {3}, std::string(3, '\0'));
  add_int_attribute(add_node(m, "QuantizeLinear", {"x", "scale", "zero"}, {"q"}, "q"), "axis", 1);
  add_int_attribute(add_node(m, "DequantizeLinear", {"q", "scale", "zero"}, {"y"}, "dq"), "axis", 1);
  add_output(m, "y");
  return m;
}

onnx::ModelProto einsum_attention() {
  onnx::ModelProto m = onnx_model(17);
  add_input(m, "q", {1, 2, 3, 4});
  add_input(m, "k", {1, 2, 3, 4});
  add_string_attribute(add_node(m, "Einsum", {"q", "k"}, {"s"}, "scores"), "equation", "bhid,bhjd->bhij");
  add_int_attribute(add_node(m, "Softmax", {"s"}, {"p"}, "softmax"), "axis", -1);
  add_string_attribute(add_node(m, "Einsum", {"p", "k"}, {"y"}, "weighted"), "equation", "bhij,bhjd->bhid");
  add_output(m, "y");
  return m;
}

onnx::ModelProto generated() {
  onnx::ModelProto m = onnx_model(18);
  add_input(m, "x", {1, 4});
  add_int64_initializer(m, "shape", {2}, {3, 4});
  add_int64_initializer(m, "start", {}, {0});
  add_int64_initializer(m, "limit", {}, {4});
  add_int64_initializer(m, "delta", {}, {1});
  add_int64_initializer(m, "sizes", {2}, {1, 3});
  add_node(m, "ConstantOfShape", {"shape"}, {"zeros"}, "zeros");
  add_node(m, "Expand", {"x", "shape"}, {"e"}, "expand");
  add_node(m, "Add", {"e", "zeros"}, {"e0"}, "add");
  add_node(m, "Range", {"start", "limit", "delta"}, {"r"}, "range");
  add_int_attribute(add_node(m, "Gather", {"e0", "r"}, {"g"}, "gather"), "axis", 1);
  add_int_attribute(add_node(m, "Split", {"g", "sizes"}, {"a", "b"}, "split"), "axis", 1);
  add_output(m, "a");
  add_output(m, "b");
  return m;
}

// Sizes that are dynamic dims (Range, a Slice to a dynamic end, Equal/Where on a shape, an
// Expand of 1 to the batch) and GatherElements / GatherND.
onnx::ModelProto dynamic_gathers() {
  onnx::ModelProto m = onnx_model(18);
  add_symbolic_input(m, "x", {"batch", "seq"});
  add_int64_initializer(m, "i0", {}, {0});
  add_int64_initializer(m, "i1", {}, {1});
  add_int64_initializer(m, "axes", {1}, {0});
  add_int64_initializer(m, "axis1", {1}, {1});
  add_int64_initializer(m, "start", {1}, {0});
  add_int64_initializer(m, "minus", {2}, {-1, -1});
  add_int64_initializer(m, "buffer", {1, 8}, {0, 1, 2, 3, 4, 5, 6, 7});
  add_int64_initializer(m, "pairs", {2, 2}, {0, 1, 1, 0});
  add_node(m, "Shape", {"x"}, {"s"}, "shape");
  add_node(m, "Gather", {"s", "i1"}, {"n"}, "n");
  add_node(m, "Unsqueeze", {"n", "axes"}, {"n1"}, "n1");
  add_node(m, "Range", {"i0", "n", "i1"}, {"r"}, "range");
  add_node(m, "Slice", {"buffer", "start", "n1", "axis1"}, {"pos"}, "positions");
  add_int_attribute(add_node(m, "GatherElements", {"buffer", "pos"}, {"ge"}, "elements"), "axis", 1);
  add_node(m, "Equal", {"s", "minus"}, {"keep"}, "keep");
  add_node(m, "Where", {"keep", "minus", "s"}, {"target"}, "target");
  add_node(m, "Expand", {"ge", "target"}, {"e"}, "expand");
  add_node(m, "GatherND", {"x", "pairs"}, {"nd"}, "nd");
  for (const char* out : {"r", "e", "nd"}) add_output(m, out);
  return m;
}

onnx::ModelProto image() {
  onnx::ModelProto m = onnx_model(19);
  add_input(m, "x", {1, 2, 4, 4});
  add_initializer(m, "w", {2, 1, 2, 2}, std::vector<float>(8, 0.5f));
  add_raw_initializer(m, "scales", onnx::TensorProto::FLOAT, {4}, floats({1, 1, 2, 2}));
  onnx::NodeProto* deconv = add_node(m, "ConvTranspose", {"x", "w"}, {"d"}, "deconv");
  add_int_attribute(deconv, "group", 2);
  onnx::NodeProto* resize = add_node(m, "Resize", {"d", "", "scales"}, {"r"}, "resize");
  add_string_attribute(resize, "mode", "linear");
  add_int64_initializer(m, "pads", {8}, {0, 0, 1, 1, 0, 0, 1, 1});
  add_node(m, "Pad", {"r", "pads"}, {"y"}, "pad");
  add_output(m, "y");
  return m;
}

const std::vector<std::string>& seeds() {
  static const std::vector<std::string> out = [] {
    std::vector<std::string> bytes;
    for (const onnx::ModelProto& m : {mlp(), conv_block(), view_chain(), dynamic_heads(), qdq(), einsum_attention(), generated(), dynamic_gathers(),
                                      image()}) {
      std::string s;
      m.SerializeToString(&s);
      bytes.push_back(std::move(s));
    }
    return bytes;
  }();
  return out;
}

// A model path in an empty directory: external data locations resolve inside it and find nothing.
const std::string& model_path() {
  static const std::string path = [] {
    std::string pattern = (std::filesystem::temp_directory_path() / "tensoracle-onnx-fuzz-XXXXXX").string();
    const char* dir = ::mkdtemp(pattern.data());
    return std::string(dir != nullptr ? dir : ".") + "/fuzz.onnx";
  }();
  return path;
}

template <typename T>
T pick(std::mt19937_64& rng, const std::vector<T>& values) {
  return values[rng() % values.size()];
}

const std::vector<int64_t> kBoundaryInts = {0, 1, -1, 2, 3, 7, 64, -2, 1 << 20, int64_t{1} << 31, int64_t{1} << 40,
                                            int64_t{1} << 62, INT64_MAX, INT64_MIN};
const std::vector<float> kBoundaryFloats = {0.0f, -0.0f, 1.0f, -1.0f, 1e-30f, 1e30f, 3.4e38f, -3.4e38f,
                                            std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()};
const std::vector<std::string> kStrings = {"", "NOTSET", "SAME_UPPER", "VALID", "linear", "nearest", "cubic", "DCR", "CRD",
                                           "half_pixel", "align_corners", "tf_crop_and_resize", "bhid,bhjd->bhij",
                                           "ij->ji", "i,i", "...ij", "tanh", "none", "../x", "/etc/passwd"};

// Every value name the graph knows, for rewiring inputs.
std::vector<std::string> value_names(const onnx::GraphProto& g) {
  std::vector<std::string> names{""};
  for (const auto& i : g.input()) names.push_back(i.name());
  for (const auto& t : g.initializer()) names.push_back(t.name());
  for (const auto& n : g.node())
    for (const auto& o : n.output()) names.push_back(o);
  return names;
}

void mutate_attribute(onnx::AttributeProto* a, std::mt19937_64& rng) {
  switch (rng() % 6) {
    case 0: a->set_type(onnx::AttributeProto::INT); a->set_i(pick(rng, kBoundaryInts)); break;
    case 1: a->set_type(onnx::AttributeProto::FLOAT); a->set_f(pick(rng, kBoundaryFloats)); break;
    case 2: a->set_type(onnx::AttributeProto::STRING); a->set_s(pick(rng, kStrings)); break;
    case 3:
      a->set_type(onnx::AttributeProto::INTS);
      if (a->ints_size() > 0 && rng() % 2) a->set_ints(static_cast<int>(rng() % a->ints_size()), pick(rng, kBoundaryInts));
      else a->add_ints(pick(rng, kBoundaryInts));
      break;
    case 4: a->set_name(pick(rng, kStrings)); break;
    default: a->clear_ints(); a->set_type(static_cast<onnx::AttributeProto::AttributeType>(rng() % 16)); break;
  }
}

void mutate_tensor(onnx::TensorProto* t, std::mt19937_64& rng) {
  switch (rng() % 5) {
    case 0:
      if (t->dims_size() > 0) t->set_dims(static_cast<int>(rng() % t->dims_size()), pick(rng, kBoundaryInts));
      else t->add_dims(pick(rng, kBoundaryInts));
      break;
    case 1: t->mutable_raw_data()->resize(t->raw_data().size() / 2); break;
    case 2: t->set_data_type(static_cast<int32_t>(rng() % 26)); break;
    case 3: {
      t->set_data_location(onnx::TensorProto::EXTERNAL);
      onnx::StringStringEntryProto* e = t->add_external_data();
      e->set_key(rng() % 2 ? "location" : "offset");
      e->set_value(pick(rng, kStrings));
      break;
    }
    default: t->add_dims(1); break;
  }
}

void mutate_model(onnx::ModelProto& m, std::mt19937_64& rng) {
  onnx::GraphProto* g = m.mutable_graph();
  const std::vector<std::string> ops = onnx_supported_ops();
  switch (rng() % 8) {
    case 0:
      if (g->node_size() > 0) g->mutable_node(static_cast<int>(rng() % g->node_size()))->set_op_type(pick(rng, ops));
      break;
    case 1:
      if (g->node_size() > 0) {
        onnx::NodeProto* n = g->mutable_node(static_cast<int>(rng() % g->node_size()));
        if (n->attribute_size() > 0 && rng() % 4) mutate_attribute(n->mutable_attribute(static_cast<int>(rng() % n->attribute_size())), rng);
        else mutate_attribute(n->add_attribute(), rng);
      }
      break;
    case 2:
      if (g->node_size() > 0) {
        onnx::NodeProto* n = g->mutable_node(static_cast<int>(rng() % g->node_size()));
        const std::string name = pick(rng, value_names(*g));
        if (n->input_size() > 0 && rng() % 3) n->set_input(static_cast<int>(rng() % n->input_size()), name);
        else n->add_input(name);
      }
      break;
    case 3:
      if (g->initializer_size() > 0) mutate_tensor(g->mutable_initializer(static_cast<int>(rng() % g->initializer_size())), rng);
      break;
    case 4:
      if (g->input_size() > 0) {
        auto* shape = g->mutable_input(static_cast<int>(rng() % g->input_size()))->mutable_type()->mutable_tensor_type()->mutable_shape();
        if (shape->dim_size() > 0 && rng() % 3) shape->mutable_dim(static_cast<int>(rng() % shape->dim_size()))->set_dim_value(pick(rng, kBoundaryInts));
        else shape->add_dim()->set_dim_param("S");
      }
      break;
    case 5:
      if (g->node_size() > 1) g->mutable_node()->SwapElements(static_cast<int>(rng() % g->node_size()), static_cast<int>(rng() % g->node_size()));
      break;
    case 6:
      if (g->node_size() > 0) g->mutable_node(static_cast<int>(rng() % g->node_size()))->add_output(pick(rng, value_names(*g)));
      break;
    default:
      m.mutable_opset_import(0)->set_version(pick(rng, std::vector<int64_t>{1, 12, 13, 17, 18, 19, 21, 23, 99}));
      break;
  }
}

// Builds and runs `model` when its inputs are static and small.
void build_and_run(const ImportedModel& model) {
  NamedArrays inputs;
  int64_t elements = 0;
  for (const OnnxInput& in : model.inputs) {
    if (!in.shape.is_static()) return;
    auto count = in.shape.element_count();
    if (!count.is_ok() || (elements += *count) > 4096) return;
    auto zeros = HostArray::zeros(in.dtype, in.shape);
    if (!zeros.is_ok()) return;
    inputs.emplace(in.name, std::move(*zeros));
  }
  // A mutated attribute (a pad, a repeat count) can ask for a huge tensor that the importer
  // accepts (it bounds one tensor, not the sum); the engine is only run when every tensor is small.
  for (size_t t = 0; t < model.network.num_tensors(); ++t) {
    const TensorDesc& desc = model.network.tensor(Tensor{static_cast<uint32_t>(t)}).desc;
    auto bytes = desc.shape.is_static() ? desc.shape.byte_size(desc.dtype) : Result<int64_t>(int64_t{0});
    if (!bytes.is_ok() || *bytes > (int64_t{1} << 24)) return;
  }
  auto build = onnx_engine_build(model, "fuzz");
  if (!build.is_ok()) return;
  build->quiet = true;
  auto bytes = build_serialized_engine(*build);
  if (!bytes.is_ok()) return;
  auto engine = Engine::deserialize(bytes->data(), bytes->size());
  if (!engine.is_ok()) return;
  auto execution = engine->create_execution();
  if (!execution.is_ok()) return;
  (void)execution->run_on_host(views_of(inputs));
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)seeds();
  (void)model_path();
  return 0;
}

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  std::mt19937_64 rng(seed);
  onnx::ModelProto model;
  if (!model.ParseFromArray(data, static_cast<int>(size)) || !model.has_graph() || model.opset_import_size() == 0 ||
      rng() % 16 == 0) {
    const std::string& s = seeds()[rng() % seeds().size()];
    if (!model.ParseFromString(s)) return size;
  }
  std::string out;
  if (rng() % 4 == 0) {
    model.SerializeToString(&out);
    if (out.size() > max_size) return size;
    std::copy(out.begin(), out.end(), data);
    return LLVMFuzzerMutate(data, out.size(), max_size);
  }
  for (int i = 1 + static_cast<int>(rng() % 3); i > 0; --i) mutate_model(model, rng);
  model.SerializeToString(&out);
  if (out.size() > max_size) return size;
  std::copy(out.begin(), out.end(), data);
  return out.size();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto file = onnx_import::parse_model(data, size, model_path());
  if (!file.is_ok()) return 0;
  (void)onnx_import::check_model(*file, model_path());
  auto model = onnx_import::import_model(*file, model_path());
  if (model.is_ok()) build_and_run(*model);
  return 0;
}
