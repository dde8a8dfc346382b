// Tensors whose bytes live in external data files next to the model (TensorProto's
// data_location EXTERNAL, the way models over 2 GB are saved): each file is mapped once and the
// tensors borrow its bytes.
//
// The file is as untrusted as the model: `location` must be a relative path that stays inside the
// model's directory (no absolute path, no `..` component, no symbolic link leading out of it),
// and `offset`/`length` must lie inside the file and match the tensor's dims. Errors name the
// tensor, the file and the bad value.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "frontends/onnx/onnx_tensor.h"
#include "io/mapped_file.h"

namespace tensoracle::onnx_import {

class ExternalDataFiles {
 public:
  // `model_path`: the .onnx file; locations are relative to its directory.
  explicit ExternalDataFiles(const std::string& model_path);

  // The `bytes` bytes of `tensor` (an EXTERNAL tensor of `dtype` and `shape`) as a view into its
  // mapped file. `what` names the tensor in errors ("ONNX model 'm.onnx': initializer 'w'").
  Result<ConstantValue> read(const onnx::TensorProto& tensor, DataType dtype, const Dims& shape, int64_t bytes,
                             const std::string& what);

 private:
  Result<std::shared_ptr<const MappedFile>> open(const std::string& location, const std::string& what);

  std::string model_dir_;
  std::map<std::string, std::shared_ptr<const MappedFile>> files_;  // by canonical path
};

}  // namespace tensoracle::onnx_import
