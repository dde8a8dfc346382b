// deformable as a model package (docs/model-packages.md): the three forms of its deformable
// convolution (deformable.h), each in fp32 and fp16, for the workflow example
// (examples/deformable/pipeline.toml). The plugin forms need their plugin library (`--plugin`):
// libtensoracle_plugins.so for deformable_plugin*, libdeform_sample_plugin.so (custom_plugin/)
// for deformable_custom*. The image shape is fixed.
#include "deformable.h"
#include "tensoracle/package.h"
#include "tensoracle/version.h"

namespace {

using deformable::Form;
using tensoracle::DataType;

template <DataType kPrecision, Form kForm>
tensoracle::Status define_deformable(tensoracle::Network& net, const tensoracle::Weights& weights) {
  return deformable::define(net, weights, {1, 8, 16, 16}, kPrecision, kForm);
}

// TENSORACLE_EXAMPLE_WEIGHTS is set by examples/CMakeLists.txt to the fixture weights.
constexpr const char* kInputs = "image:1x8x16x16:1x8x16x16:1x8x16x16";
const TensoracleModelGraph kGraphs[] = {
    {"deformable", "1", "conv stem, a modulated deformable convolution from grid_sample + mask + matmul, 1x1 head",
     TENSORACLE_EXAMPLE_WEIGHTS, kInputs, &define_deformable<DataType::kFloat32, Form::kComposition>},
    {"deformable_fp16", "1", "deformable with fp16 layers, fp32 I/O", TENSORACLE_EXAMPLE_WEIGHTS, kInputs,
     &define_deformable<DataType::kFloat16, Form::kComposition>},
    {"deformable_plugin", "1", "deformable with the deformable convolution as one tensoracle::dcnv2 plugin layer",
     TENSORACLE_EXAMPLE_WEIGHTS, kInputs, &define_deformable<DataType::kFloat32, Form::kPlugin>},
    {"deformable_plugin_fp16", "1", "deformable_plugin with fp16 layers, fp32 I/O", TENSORACLE_EXAMPLE_WEIGHTS, kInputs,
     &define_deformable<DataType::kFloat16, Form::kPlugin>},
    {"deformable_custom", "1",
     "deformable with one offset+mask conv and the example's own deformable::deform_sample cubin plugin, then a matmul",
     TENSORACLE_EXAMPLE_WEIGHTS, kInputs, &define_deformable<DataType::kFloat32, Form::kCustomPlugin>},
    {"deformable_custom_fp16", "1", "deformable_custom with fp16 layers, fp32 I/O", TENSORACLE_EXAMPLE_WEIGHTS, kInputs,
     &define_deformable<DataType::kFloat16, Form::kCustomPlugin>},
};
const TensoracleModelPackage kPackage = {"deformable", TENSORACLE_VERSION_STRING, sizeof(kGraphs) / sizeof(kGraphs[0]), kGraphs};

}  // namespace

TENSORACLE_PACKAGE_EXPORT const TensoracleModelPackage* tensoracle_model_package_v1(void) { return &kPackage; }
