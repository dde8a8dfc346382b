// calibrate(): reads the inputs, builds the calibration engine, runs the passes over the inputs
// and turns each target's statistics into its scale (calibrate.h).
#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "calibrate/thresholds.h"
#include "core/errors.h"
#include "tensoracle/build.h"
#include "tensoracle/calibrate.h"
#include "tensoracle/engine.h"
#include "tensoracle/float_formats.h"
#include "tensoracle/hashing.h"
#include "tensoracle/npy.h"
#include "tensoracle/version.h"

namespace tensoracle {

const char* calibration_method_name(CalibrationMethod method) {
  switch (method) {
    case CalibrationMethod::kMax: return "max";
    case CalibrationMethod::kPercentile: return "percentile";
    case CalibrationMethod::kEntropy: return "entropy";
    case CalibrationMethod::kMse: return "mse";
  }
  return "?";
}

Result<CalibrationMethod> parse_calibration_method(const std::string& name) {
  for (CalibrationMethod m : {CalibrationMethod::kMax, CalibrationMethod::kPercentile, CalibrationMethod::kEntropy,
                              CalibrationMethod::kMse})
    if (name == calibration_method_name(m)) return m;
  return invalid_argument("unknown calibration method '{}' (max, percentile, entropy, mse)", name);
}

namespace {

using calibration::AbsHistogram;

struct Batch {
  std::string file;
  NamedArrays arrays;  // the network's inputs
};

// Where a target's values come from.
enum class Source { kConstant, kInput, kActivation };

struct TargetState {
  const CalibrationTarget* target = nullptr;
  Source source = Source::kActivation;
  const Node* constant = nullptr;
  double min = std::numeric_limits<double>::infinity();
  double max = -std::numeric_limits<double>::infinity();
  AbsHistogram histogram;
};

std::vector<float> floats_of(const ArrayView& view) {
  std::vector<float> values(static_cast<size_t>(view.element_count()));
  if (values.empty()) return values;  // an empty array may have no data pointer
  convert_elements(view.dtype, view.data, DataType::kFloat32, values.data(), values.size());
  return values;
}

Status check_settings(const CalibrationSettings& s) {
  if (!(s.percentile > 0 && s.percentile <= 100))
    return invalid_argument("percentile {} is outside (0, 100]", s.percentile);
  const int64_t least = s.method == CalibrationMethod::kEntropy ? 128 : 1;
  if (s.num_bins < least || s.num_bins > (int64_t{1} << 20))
    return invalid_argument("num_bins {} is outside [{}, {}] for method {}", s.num_bins, least, int64_t{1} << 20,
                            calibration_method_name(s.method));
  return Status::ok();
}

Result<std::vector<TargetState>> target_states(const Network& network, const std::vector<CalibrationTarget>& targets) {
  std::vector<TargetState> states;
  for (const CalibrationTarget& target : targets) {
    TO_ASSIGN_OR_RETURN_CONTEXT(Tensor t, network.find_tensor(target.tensor),
                                fmt::format("calibration target for scale '{}'", target.scale_name));
    const TensorInfo& info = network.tensor(t);
    if (target.format != DataType::kInt8 && target.format != DataType::kFloat8E4M3)
      return invalid_argument("scale '{}': format {} is not int8 or fp8e4m3", target.scale_name,
                              data_type_name(target.format));
    if (!is_floating_point(info.desc.dtype))
      return invalid_argument("scale '{}': tensor '{}' is {}, not a floating-point tensor", target.scale_name,
                              target.tensor, info.desc.to_string());
    TargetState state;
    state.target = &target;
    if (info.producer < 0) {
      state.source = Source::kInput;
    } else if (const Node& producer = network.node(static_cast<size_t>(info.producer));
               producer.kind == OpKind::kConstant) {
      state.source = Source::kConstant;
      state.constant = &producer;
    }
    if (target.axis && state.source != Source::kConstant)
      return invalid_argument("scale '{}': tensor '{}' is computed by the network; per-channel scales (axis {}) are "
                              "calibrated for constants (weights) only",
                              target.scale_name, target.tensor, *target.axis);
    if (target.axis && (*target.axis < 0 || *target.axis >= static_cast<int64_t>(info.desc.shape.rank())))
      return invalid_argument("scale '{}': axis {} is out of range for tensor '{}' {}", target.scale_name, *target.axis,
                              target.tensor, info.desc.to_string());
    states.push_back(std::move(state));
  }
  return states;
}

Result<std::vector<Batch>> read_batches(const Network& network, const std::vector<std::string>& files,
                                        nlohmann::json& hashes) {
  if (files.empty()) return invalid_argument("no calibration inputs: give at least one input file");
  std::set<std::string> names;
  for (Tensor t : network.inputs()) names.insert(network.tensor(t).name);
  std::vector<Batch> batches;
  for (const std::string& file : files) {
    TO_ASSIGN_OR_RETURN_CONTEXT(std::string sha256, sha256_file_hex(file), fmt::format("calibration input '{}'", file));
    ArrayReadOptions options;
    options.only = names;
    options.check = [&](const std::string& name, DataType dtype, const Dims& shape) -> Status {
      TO_ASSIGN_OR_RETURN(Tensor t, network.find_tensor(name));
      const TensorDesc& want = network.tensor(t).desc;
      if (dtype != want.dtype || shape.rank() != want.shape.rank())
        return invalid_argument("input '{}' is {}{}, the network's is {}", name, data_type_name(dtype),
                                shape.to_string(), want.to_string());
      for (size_t d = 0; d < shape.rank(); ++d)
        if (want.shape[d] >= 0 && want.shape[d] != shape[d])
          return invalid_argument("input '{}' is {}{}, the network's is {}", name, data_type_name(dtype),
                                  shape.to_string(), want.to_string());
      return Status::ok();
    };
    TO_ASSIGN_OR_RETURN_CONTEXT(NamedArrays arrays, read_named_arrays(file, options),
                                fmt::format("calibration input '{}'", file));
    hashes.push_back({{"file", file}, {"sha256", sha256}});
    batches.push_back({file, std::move(arrays)});
  }
  return batches;
}

// One profile spanning every batch's shapes (opt = max: the planner sizes for the largest).
std::vector<InputDeclaration> declare_batches(const Network& network, const std::vector<Batch>& batches) {
  std::vector<InputDeclaration> inputs;
  for (Tensor t : network.inputs()) {
    const std::string& name = network.tensor(t).name;
    ShapeRange range;
    for (const Batch& batch : batches) {
      const Dims& shape = batch.arrays.find(name)->second.shape();
      if (range.min.rank() == 0 && range.max.rank() == 0) {
        range = ShapeRange::fixed(shape);
        continue;
      }
      for (size_t d = 0; d < shape.rank(); ++d) {
        range.min[d] = std::min(range.min[d], shape[d]);
        range.max[d] = std::max(range.max[d], shape[d]);
      }
    }
    range.opt = range.max;
    inputs.push_back({name, std::nullopt, {range}});
  }
  return inputs;
}

Status check_finite(const std::vector<float>& values, const TargetState& state, const std::string& file) {
  for (size_t i = 0; i < values.size(); ++i)
    if (!std::isfinite(values[i]))
      return invalid_argument("tensor '{}' (scale '{}') holds {} at element {} for calibration input '{}'",
                              state.target->tensor, state.target->scale_name, values[i], i, file);
  return Status::ok();
}

// The values of each input- or activation-sourced target for one batch (by target; empty for
// constants).
using BatchValues = std::vector<std::vector<float>>;

Result<BatchValues> run_batch(Execution& exec, const Batch& batch, const std::vector<TargetState>& states) {
  TO_ASSIGN_OR_RETURN_CONTEXT(NamedArrays outputs, exec.run_on_host(views_of(batch.arrays)),
                              fmt::format("calibration input '{}'", batch.file));
  BatchValues values(states.size());
  for (size_t i = 0; i < states.size(); ++i) {
    const TargetState& state = states[i];
    if (state.source == Source::kConstant) continue;
    const NamedArrays& from = state.source == Source::kInput ? batch.arrays : outputs;
    const auto it = from.find(state.target->tensor);
    TO_ASSERT(it != from.end());
    values[i] = floats_of(it->second.view());
    TO_RETURN_IF_ERROR(check_finite(values[i], state, batch.file));
  }
  return values;
}

// A weight's scale: max per channel along the axis (or of the whole tensor).
Result<CalibratedScale> weight_scale(const TargetState& state) {
  const ArrayView& view = state.constant->constant->view;
  const std::vector<float> values = floats_of(view);
  CalibratedScale out;
  out.target = *state.target;
  int64_t channels = 1, inner = static_cast<int64_t>(values.size());
  if (state.target->axis) {
    const int64_t axis = *state.target->axis;
    channels = view.shape[static_cast<size_t>(axis)];
    inner = 1;
    for (size_t d = static_cast<size_t>(axis) + 1; d < view.shape.rank(); ++d) inner *= view.shape[d];
  }
  std::vector<double> amax(static_cast<size_t>(channels), 0.0);
  out.min = std::numeric_limits<double>::infinity();
  out.max = -out.min;
  for (size_t i = 0; i < values.size(); ++i) {
    if (!std::isfinite(values[i]))
      return invalid_argument("weight '{}' (scale '{}') holds {} at element {}", state.target->tensor,
                              state.target->scale_name, values[i], i);
    const size_t c = static_cast<size_t>((static_cast<int64_t>(i) / inner) % channels);
    amax[c] = std::max(amax[c], std::fabs(static_cast<double>(values[i])));
    out.min = std::min(out.min, static_cast<double>(values[i]));
    out.max = std::max(out.max, static_cast<double>(values[i]));
  }
  const Dims shape = state.target->axis ? Dims{channels} : Dims{};
  TO_ASSIGN_OR_RETURN(out.scale, HostArray::zeros(DataType::kFloat32, shape));
  const double qmax = calibration::format_max(state.target->format);
  for (size_t c = 0; c < amax.size(); ++c) {
    out.scale.data_as<float>()[c] = amax[c] > 0 ? static_cast<float>(amax[c] / qmax) : 1.0f;
    out.threshold = std::max(out.threshold, amax[c]);
  }
  return out;
}

double activation_threshold(const TargetState& state, const CalibrationSettings& settings) {
  const double amax = std::max(std::fabs(state.min), std::fabs(state.max));
  switch (settings.method) {
    case CalibrationMethod::kMax: return amax;
    case CalibrationMethod::kPercentile: return calibration::percentile_threshold(state.histogram, settings.percentile);
    case CalibrationMethod::kEntropy: return calibration::entropy_threshold(state.histogram);
    case CalibrationMethod::kMse: return calibration::mse_threshold(state.histogram, state.target->format);
  }
  return amax;
}

void report(const CalibrationSettings& settings, const std::string& line) {
  if (settings.progress) settings.progress(line);
}

}  // namespace

Result<Calibration> calibrate(const Network& network, const Weights& weights,
                              const std::vector<CalibrationTarget>& targets, const std::vector<std::string>& inputs,
                              const CalibrationSettings& settings) {
  TO_RETURN_IF_ERROR(check_settings(settings));
  if (targets.empty()) return invalid_argument("nothing to calibrate: no targets");
  TO_ASSIGN_OR_RETURN(Network net, calibration_network(network, targets));
  TO_ASSIGN_OR_RETURN(std::vector<TargetState> states, target_states(net, targets));
  nlohmann::json hashes = nlohmann::json::array();
  TO_ASSIGN_OR_RETURN(std::vector<Batch> batches, read_batches(net, inputs, hashes));

  EngineBuild build;
  build.name = "calibration";
  build.graph = [net](Network& out, const Weights&) {
    out = net;
    return out.status();
  };
  build.graph_version = "calibration";
  build.weights = weights;
  build.inputs = declare_batches(net, batches);
  build.backend = settings.backend;
  build.settings.optimization_level = 0;
  build.quiet = true;
  report(settings, fmt::format("calibration: building the fp32 calibration engine ({} backend)", settings.backend));
  TO_ASSIGN_OR_RETURN_CONTEXT(std::string bytes, build_serialized_engine(build), "the calibration engine");
  TO_ASSIGN_OR_RETURN(Engine engine, Engine::deserialize(bytes.data(), bytes.size(), "<calibration engine>"));
  TO_ASSIGN_OR_RETURN(Execution exec, engine.create_execution());

  const bool histogram = settings.method != CalibrationMethod::kMax;
  const int passes = histogram ? 2 : 1;
  for (size_t b = 0; b < batches.size(); ++b) {
    report(settings, fmt::format("calibration pass 1/{}: input {} of {} ({})", passes, b + 1, batches.size(),
                                 batches[b].file));
    TO_ASSIGN_OR_RETURN(BatchValues values, run_batch(exec, batches[b], states));
    for (size_t i = 0; i < states.size(); ++i) {
      for (float x : values[i]) {
        states[i].min = std::min(states[i].min, static_cast<double>(x));
        states[i].max = std::max(states[i].max, static_cast<double>(x));
      }
    }
  }
  for (const TargetState& s : states)
    if (s.source != Source::kConstant && !(s.min <= s.max))
      return invalid_argument("tensor '{}' (scale '{}') has no elements in any calibration input: nothing to measure",
                              s.target->tensor, s.target->scale_name);
  if (histogram) {
    for (TargetState& s : states) {
      if (s.source == Source::kConstant) continue;
      s.histogram.amax = std::max(std::fabs(s.min), std::fabs(s.max));
      s.histogram.bins.assign(static_cast<size_t>(settings.num_bins), 0);
    }
    for (size_t b = 0; b < batches.size(); ++b) {
      report(settings, fmt::format("calibration pass 2/2: input {} of {} ({})", b + 1, batches.size(), batches[b].file));
      TO_ASSIGN_OR_RETURN(BatchValues values, run_batch(exec, batches[b], states));
      for (size_t i = 0; i < states.size(); ++i)
        if (!values[i].empty()) states[i].histogram.add(values[i].data(), static_cast<int64_t>(values[i].size()));
    }
  }

  Calibration result;
  nlohmann::json described = nlohmann::json::array();
  for (const TargetState& s : states) {
    CalibratedScale scale;
    if (s.source == Source::kConstant) {
      TO_ASSIGN_OR_RETURN(scale, weight_scale(s));
    } else {
      scale.target = *s.target;
      scale.min = s.min;
      scale.max = s.max;
      scale.threshold = activation_threshold(s, settings);
      TO_ASSIGN_OR_RETURN(scale.scale, HostArray::zeros(DataType::kFloat32, Dims{}));
      *scale.scale.data_as<float>() =
          scale.threshold > 0 ? static_cast<float>(scale.threshold / calibration::format_max(s.target->format)) : 1.0f;
    }
    nlohmann::json entry = {{"scale", scale.target.scale_name}, {"tensor", scale.target.tensor},
                            {"format", data_type_name(scale.target.format)},
                            {"kind", s.source == Source::kConstant ? "weight" : "activation"},
                            {"min", scale.min}, {"max", scale.max}, {"threshold", scale.threshold}};
    if (scale.target.axis) entry["axis"] = *scale.target.axis;
    described.push_back(std::move(entry));
    result.scales.push_back(std::move(scale));
  }
  TO_ASSIGN_OR_RETURN(std::string graph_hash, structural_hash(net));
  result.metadata["method"] = calibration_method_name(settings.method);
  if (settings.method == CalibrationMethod::kPercentile) result.metadata["percentile"] = fmt::format("{}", settings.percentile);
  if (histogram) result.metadata["num_bins"] = std::to_string(settings.num_bins);
  if (settings.method == CalibrationMethod::kEntropy) result.metadata["kl_bins"] = "128";
  result.metadata["weights_method"] = "max";
  result.metadata["graph_sha256"] = graph_hash;
  result.metadata["inputs"] = hashes.dump();
  result.metadata["targets"] = described.dump();
  result.metadata["backend"] = settings.backend;
  result.metadata["tensoracle_version"] = TENSORACLE_VERSION_STRING;
  return result;
}

Status write_calibration(const std::string& path, const Calibration& calibration) {
  NamedArrayViews tensors;
  for (const CalibratedScale& s : calibration.scales) tensors[s.target.scale_name] = s.scale.view();
  SafetensorsWriteOptions options;
  options.metadata = calibration.metadata;
  return write_safetensors(path, tensors, options);
}

}  // namespace tensoracle
