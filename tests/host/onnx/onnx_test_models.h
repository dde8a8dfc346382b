// ONNX models built in code for the importer's tests: a small builder over the generated
// protobuf classes, and a writer to a temporary file.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "host/io/io_test_support.h"
#include "onnx-ml.pb.h"
#include "tensoracle/build.h"
#include "tensoracle/engine.h"
#include "tensoracle/onnx.h"

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

inline std::string write_model(const TempDir& dir, const onnx::ModelProto& m, const std::string& name = "model.onnx") {
  const std::string path = dir.file(name);
  std::string bytes;
  EXPECT_TRUE(m.SerializeToString(&bytes));
  write_bytes(path, bytes);
  return path;
}

// Builds an engine of an imported model on the cpu backend (declaring `ranges` for its dynamic
// inputs) and runs it on `inputs`.
inline Result<NamedArrays> run_imported(const ImportedModel& model, const NamedArrayViews& inputs,
                                        const std::map<std::string, ShapeRange>& ranges = {}) {
  TO_ASSIGN_OR_RETURN(EngineBuild build, onnx_engine_build(model, "model"));
  for (const auto& [name, range] : ranges) build.add_input(name, std::vector<ShapeRange>{range});
  build.quiet = true;
  TO_ASSIGN_OR_RETURN(const std::string bytes, build_serialized_engine(build));
  TO_ASSIGN_OR_RETURN(Engine engine, Engine::deserialize(bytes.data(), bytes.size()));
  TO_ASSIGN_OR_RETURN(Execution execution, engine.create_execution());
  return execution.run_on_host(inputs);
}

}  // namespace tensoracle::testing
