// resize: nearest / linear over 1-3 trailing dims, three coordinate mappings. The tap table
// (which input positions each output coordinate reads, and their weights) is computed here with
// the reference's arithmetic (src/backends/cpu/resize.cpp) and uploaded once in initialize().
#include <cmath>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels/data_movement_families.h"
#include "backends/cuda/kernels/resize.h"
#include "graph/attributes.h"

namespace tensoracle::backends::cuda {

namespace {

// The taps of one dim resized from `in` to `out` with coordinate ratio `scale_used`.
void append_taps(int64_t in, int64_t out, double scale_used, ResizeMode mode, ResizeCoordinates coords,
                 std::vector<ResizeTap>& taps) {
  for (int64_t o = 0; o < out; ++o) {
    double src;
    switch (coords) {
      case ResizeCoordinates::kAsymmetric: src = static_cast<double>(o) * scale_used; break;
      case ResizeCoordinates::kHalfPixel: src = (static_cast<double>(o) + 0.5) * scale_used - 0.5; break;
      case ResizeCoordinates::kAlignCorners:
      default: src = out > 1 ? static_cast<double>(o) * static_cast<double>(in - 1) / static_cast<double>(out - 1) : 0.0; break;
    }
    ResizeTap tap;
    if (mode == ResizeMode::kNearest) {
      // PyTorch's fp32 index arithmetic for asymmetric ("nearest") and half-pixel
      // ("nearest-exact"); align-corners rounds half up.
      const float fscale = static_cast<float>(scale_used);
      double pick;
      if (coords == ResizeCoordinates::kAsymmetric) pick = std::floor(static_cast<float>(o) * fscale);
      else if (coords == ResizeCoordinates::kHalfPixel) pick = std::floor((static_cast<float>(o) + 0.5f) * fscale);
      else pick = std::floor(src + 0.5);
      tap.i0 = tap.i1 = std::min(in - 1, std::max<int64_t>(0, static_cast<int64_t>(pick)));
    } else {
      src = std::max(0.0, src);  // PyTorch clamps negative source coordinates
      const int64_t i0 = std::min(in - 1, static_cast<int64_t>(std::floor(src)));
      tap.i0 = i0;
      tap.i1 = std::min(in - 1, i0 + 1);
      tap.w1 = tap.i1 == i0 ? 0.0 : src - static_cast<double>(i0);
    }
    taps.push_back(tap);
  }
}

struct DeviceFree {
  void operator()(void* p) const { cudaFree(p); }
};

class ResizeTactic final : public KernelTactic {
 public:
  ResizeTactic() : KernelTactic("kernel.resize", "") {}
  Status initialize(const StepInstance& step, const RunContext&) override {
    initialized_ = false;
    TO_ASSIGN_OR_RETURN(const ResizeAttributes* attrs, graph::attributes_of<ResizeAttributes>(step.anchor.node));
    const Dims& x = step.anchor.inputs[0]->shape;
    const Dims& y = step.outputs[0].shape;
    const ResizeMode mode = attrs->mode;
    const ResizeCoordinates coords = attrs->coordinates;
    const std::vector<double>& scales = attrs->scales;
    const size_t n = attrs->spatial_rank();
    if (n > 3 || x.rank() < 3 || y.rank() != x.rank())
      return unsupported("layer '{}': resizes {} trailing dims of {}", step.anchor.node.name, n, x.to_string());
    args_ = ResizeArgs{};
    std::vector<ResizeTap> taps;
    for (size_t i = 0; i < 3; ++i) {
      if (i < 3 - n) {
        taps.push_back(ResizeTap{});
        continue;
      }
      const size_t dim = x.rank() - 3 + i;
      args_.in[i] = x[dim];
      args_.out[i] = y[dim];
      const double scale_used = scales.empty() ? static_cast<double>(x[dim]) / static_cast<double>(y[dim])
                                               : 1.0 / scales[i - (3 - n)];
      append_taps(x[dim], y[dim], scale_used, mode, coords, taps);
    }
    const int64_t out_size = args_.out[0] * args_.out[1] * args_.out[2];
    args_.planes = out_size ? elements_in(y) / out_size : 0;
    void* table = nullptr;
    TO_CUDA_RETURN_IF_ERROR(cudaMalloc(&table, taps.size() * sizeof(ResizeTap)));
    taps_.reset(table);
    TO_CUDA_RETURN_IF_ERROR(cudaMemcpy(table, taps.data(), taps.size() * sizeof(ResizeTap), cudaMemcpyHostToDevice));
    args_.taps = static_cast<const ResizeTap*>(table);
    type_ = step.outputs[0].dtype;
    initialized_ = true;
    return Status::ok();
  }
  Status run(const StepInstance&, const StepBuffers& buffers, const RunContext& ctx) override {
    TO_RETURN_IF_ERROR(require_initialized());
    return cuda_status(launch_resize(type_, buffers.inputs[0].data, buffers.outputs[0].data, args_, ctx.stream),
                       "resize kernel");
  }

 private:
  std::unique_ptr<void, DeviceFree> taps_;
  ResizeArgs args_;
  DataType type_ = DataType::kFloat32;
};

class ResizeFamily final : public KernelFamily {
 public:
  ResizeFamily() : KernelFamily("kernel.resize") {}
  Status can_implement(const StepInstance& step, const DeviceInfo&) const override {
    TO_RETURN_IF_ERROR(check_plain_step(step));
    TO_ASSIGN_OR_RETURN(const ResizeAttributes* attrs, graph::attributes_of<ResizeAttributes>(step.anchor.node));
    const TensorDesc& x = *step.anchor.inputs[0];
    const DataType type = x.dtype;
    if (type != DataType::kFloat32 && type != DataType::kFloat16 && type != DataType::kBFloat16)
      return refuse(step, "type {} (takes fp32, fp16, bf16)", data_type_name(type));
    const size_t n = attrs->spatial_rank();
    if (n < 1 || n > 3 || x.shape.rank() < n + 1 || step.outputs[0].shape.rank() != x.shape.rank())
      return refuse(step, "resizes {} trailing dims of {} (takes 1 to 3)", n, x.to_string());
    for (size_t i = x.shape.rank() - n; i < x.shape.rank(); ++i)
      if (x.shape[i] == 0 && step.outputs[0].shape[i] > 0) return refuse(step, "resizes an empty dim of {}", x.to_string());
    return Status::ok();
  }

 protected:
  std::unique_ptr<CudaTactic> make(const std::string&) const override { return std::make_unique<ResizeTactic>(); }
};

}  // namespace

std::shared_ptr<const TacticFamily> make_resize_family() { return std::make_shared<ResizeFamily>(); }

}  // namespace tensoracle::backends::cuda
