#include "engine/cuda_execution.h"

#include "backends/cuda/plan_json.h"
#include "backends/cuda/runtime.h"
#include "core/errors.h"

namespace tensoracle {

namespace {

namespace cu = backends::cuda;

class CudaExecution : public ExecutionBackend {
 public:
  explicit CudaExecution(std::unique_ptr<cu::Runtime> runtime) : runtime_(std::move(runtime)) {}

  Result<std::map<std::string, Dims>> output_shapes(const std::map<std::string, Dims>& input_shapes) override {
    return runtime_->prepare(input_shapes);
  }

  // Bindings are device addresses; `stream` is a cudaStream_t (nullptr: the legacy default
  // stream, which cannot be captured into a CUDA graph).
  Status enqueue(const std::map<std::string, Dims>& input_shapes, const std::map<std::string, void*>& bindings,
                 const std::map<std::string, Dims>&, void* stream) override {
    TO_RETURN_IF_ERROR(runtime_->prepare(input_shapes).status());  // no work when the shapes are prepared
    return runtime_->enqueue(bindings, static_cast<cudaStream_t>(stream));
  }

  Result<std::vector<LayerTiming>> profile_layers(const std::map<std::string, void*>& bindings, void* stream,
                                                  int iterations) override {
    TO_ASSIGN_OR_RETURN(std::vector<cu::StepTiming> steps,
                        runtime_->profile_steps(bindings, static_cast<cudaStream_t>(stream), iterations));
    std::vector<LayerTiming> out;
    for (cu::StepTiming& s : steps) out.push_back(LayerTiming{std::move(s.layers), std::move(s.kind), std::move(s.tactic), s.median_ms});
    return out;
  }

 private:
  std::unique_ptr<cu::Runtime> runtime_;
};

class CudaRestoredPlan : public RestoredPlan {
 public:
  explicit CudaRestoredPlan(std::shared_ptr<const cu::LoadedPlan> plan) : plan_(std::move(plan)) {}
  Result<std::unique_ptr<ExecutionBackend>> create_execution() const override {
    TO_ASSIGN_OR_RETURN(std::unique_ptr<cu::Runtime> runtime, cu::Runtime::create(plan_));
    return std::unique_ptr<ExecutionBackend>(std::make_unique<CudaExecution>(std::move(runtime)));
  }

 private:
  std::shared_ptr<const cu::LoadedPlan> plan_;
};

}  // namespace

Result<std::shared_ptr<const RestoredPlan>> restore_cuda_engine_plan(const EngineFile& file) {
  auto keep = std::make_shared<EngineFile>(file);
  backends::BlobLookup lookup = [keep](const std::string& name) -> Result<ConstantBytes> {
    TO_ASSIGN_OR_RETURN(ByteView bytes, keep->blob(name));
    ConstantBytes out;
    out.view = ArrayView{DataType::kUInt8, Dims({static_cast<int64_t>(bytes.size)}), bytes.data};
    out.owner = keep;
    return out;
  };
  auto plan = cu::deserialize_plan(file.plan().as_string_view(), lookup);
  if (!plan.is_ok()) return plan.status().with_context(fmt::format("engine '{}'", file.label()));
  auto loaded = cu::LoadedPlan::load(std::move(plan).value());
  if (!loaded.is_ok()) return loaded.status().with_context(fmt::format("engine '{}'", file.label()));
  return std::shared_ptr<const RestoredPlan>(std::make_shared<CudaRestoredPlan>(std::move(loaded).value()));
}

}  // namespace tensoracle
