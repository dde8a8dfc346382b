// Building ONNX models in code over the generated protobuf classes: the importer's tests and its
// fuzz target make their models with these (no test framework needed).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "onnx-ml.pb.h"

namespace tensoracle::testing {

// A model of the default domain at `opset` with an empty graph named "g".
inline onnx::ModelProto onnx_model(int64_t opset = 17) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.set_producer_name("tensoracle-tests");
  onnx::OperatorSetIdProto* set = model.add_opset_import();
  set->set_domain("");
  set->set_version(opset);
  model.mutable_graph()->set_name("g");
  return model;
}

// A float tensor value (graph input or output); a dim of -1 becomes the symbol "N".
inline void add_value(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list, const std::string& name,
                      const std::vector<int64_t>& dims, int32_t type = onnx::TensorProto::FLOAT) {
  onnx::ValueInfoProto* v = list->Add();
  v->set_name(name);
  onnx::TypeProto::Tensor* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(type);
  onnx::TensorShapeProto* shape = t->mutable_shape();
  for (int64_t d : dims) {
    if (d < 0) shape->add_dim()->set_dim_param("N");
    else shape->add_dim()->set_dim_value(d);
  }
}
inline void add_input(onnx::ModelProto& m, const std::string& name, const std::vector<int64_t>& dims) {
  add_value(m.mutable_graph()->mutable_input(), name, dims);
}
// A float graph input whose dims are sizes or symbols: {"batch", "seq", "8"}.
inline void add_symbolic_input(onnx::ModelProto& m, const std::string& name, const std::vector<std::string>& dims) {
  add_value(m.mutable_graph()->mutable_input(), name, {});
  onnx::TensorShapeProto* shape = m.mutable_graph()->mutable_input()->rbegin()->mutable_type()->mutable_tensor_type()->mutable_shape();
  for (const std::string& d : dims) {
    if (!d.empty() && d.find_first_not_of("0123456789") == std::string::npos) shape->add_dim()->set_dim_value(std::stoll(d));
    else shape->add_dim()->set_dim_param(d);
  }
}
inline void add_output(onnx::ModelProto& m, const std::string& name) {
  onnx::ValueInfoProto* v = m.mutable_graph()->add_output();
  v->set_name(name);
}

// A float initializer with raw_data.
inline onnx::TensorProto* add_initializer(onnx::ModelProto& m, const std::string& name, const std::vector<int64_t>& dims,
                                          const std::vector<float>& values) {
  onnx::TensorProto* t = m.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t->add_dims(d);
  t->set_raw_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)));
  return t;
}

inline onnx::NodeProto* add_node(onnx::ModelProto& m, const std::string& op, const std::vector<std::string>& inputs,
                                 const std::vector<std::string>& outputs, const std::string& name = "") {
  onnx::NodeProto* n = m.mutable_graph()->add_node();
  n->set_op_type(op);
  n->set_name(name);
  for (const std::string& i : inputs) n->add_input(i);
  for (const std::string& o : outputs) n->add_output(o);
  return n;
}

inline onnx::AttributeProto* add_int_attribute(onnx::NodeProto* node, const std::string& name, int64_t value) {
  onnx::AttributeProto* a = node->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(value);
  return a;
}

inline onnx::AttributeProto* add_ints_attribute(onnx::NodeProto* node, const std::string& name,
                                               const std::vector<int64_t>& values) {
  onnx::AttributeProto* a = node->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) a->add_ints(v);
  return a;
}

inline onnx::AttributeProto* add_string_attribute(onnx::NodeProto* node, const std::string& name,
                                                  const std::string& value) {
  onnx::AttributeProto* a = node->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(value);
  return a;
}

// An int64 initializer with int64_data.
inline onnx::TensorProto* add_int64_initializer(onnx::ModelProto& m, const std::string& name,
                                                const std::vector<int64_t>& dims, const std::vector<int64_t>& values) {
  onnx::TensorProto* t = m.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  for (int64_t d : dims) t->add_dims(d);
  for (int64_t v : values) t->add_int64_data(v);
  return t;
}

// An initializer of any type from its raw bytes.
inline onnx::TensorProto* add_raw_initializer(onnx::ModelProto& m, const std::string& name, int32_t type,
                                              const std::vector<int64_t>& dims, const std::string& bytes) {
  onnx::TensorProto* t = m.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(type);
  for (int64_t d : dims) t->add_dims(d);
  t->set_raw_data(bytes);
  return t;
}

}  // namespace tensoracle::testing
