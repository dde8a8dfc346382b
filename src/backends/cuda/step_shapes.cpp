#include "backends/cuda/step_shapes.h"

#include <algorithm>

#include "core/errors.h"

namespace tensoracle::backends::cuda {

StepShapes StepShapes::of(const StepInstance& step) {
  StepShapes s;
  for (const TensorDesc* in : step.anchor.inputs) s.shapes.push_back(in ? in->shape : Dims());
  for (const TensorDesc& in : step.program.inputs) s.shapes.push_back(in.shape);
  for (const TensorDesc& out : step.outputs) s.shapes.push_back(out.shape);
  s.layouts = step.input_layouts;
  s.layouts.insert(s.layouts.end(), step.output_layouts.begin(), step.output_layouts.end());
  s.layouts.insert(s.layouts.end(), step.extra_input_layouts.begin(), step.extra_input_layouts.end());
  return s;
}

bool StepShapes::matches(const StepInstance& step) const {
  size_t i = 0;
  const auto next = [&](const Dims& d) { return i < shapes.size() && shapes[i++] == d; };
  for (const TensorDesc* in : step.anchor.inputs)
    if (!next(in ? in->shape : Dims())) return false;
  for (const TensorDesc& in : step.program.inputs)
    if (!next(in.shape)) return false;
  for (const TensorDesc& out : step.outputs)
    if (!next(out.shape)) return false;
  const size_t ni = step.input_layouts.size(), no = step.output_layouts.size();
  if (i != shapes.size() || layouts.size() != ni + no + step.extra_input_layouts.size()) return false;
  return std::equal(step.input_layouts.begin(), step.input_layouts.end(), layouts.begin()) &&
         std::equal(step.output_layouts.begin(), step.output_layouts.end(), layouts.begin() + ni) &&
         std::equal(step.extra_input_layouts.begin(), step.extra_input_layouts.end(), layouts.begin() + ni + no);
}

std::string StepShapes::key() const {
  std::string k;
  for (const Dims& d : shapes) k += d.to_string() + ";";
  for (Layout l : layouts) k += layout_name(l), k += ";";
  return k;
}

Status not_prepared_for(const StepInstance& step, const std::string& tactic) {
  return make_error(StatusCode::kFailedPrecondition, "layer '{}': {} runs before initialize() for these shapes",
                    step.anchor.node.name, tactic);
}

}  // namespace tensoracle::backends::cuda
