// The builder: EngineBuild -> checked network, key manifest, I/O table -> engine file (build.h).
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>

#include "backends/cpu/cpu_plan.h"
#ifdef TENSORACLE_HAVE_CUDA_BACKEND
#include "backends/cuda/plan_json.h"
#endif
#include "core/errors.h"
#include "tensoracle/build.h"
#include "tensoracle/engine_file.h"
#include "tensoracle/hashing.h"

namespace tensoracle {

namespace {

std::string join(const std::vector<std::string>& parts, const char* separator) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : separator) + p;
  return out;
}

// Every way the declared inputs disagree with the network's, one sentence each.
std::vector<std::string> declaration_problems(const Network& net, const std::vector<InputDeclaration>& declared) {
  std::vector<std::string> problems;
  const auto& inputs = net.inputs();
  if (declared.size() != inputs.size()) {
    std::vector<std::string> names;
    for (Tensor t : inputs) names.push_back(net.tensor(t).name);
    problems.push_back(fmt::format("the network has {} input(s) ({}), {} declared", inputs.size(), join(names, ", "),
                                   declared.size()));
  }
  const size_t profiles = declared.empty() ? 0 : declared.front().profiles.size();
  for (size_t i = 0; i < declared.size(); ++i) {
    const InputDeclaration& d = declared[i];
    if (d.profiles.empty()) problems.push_back(fmt::format("input '{}': no shape declared", d.name));
    if (d.profiles.size() != profiles)
      problems.push_back(fmt::format("input '{}': {} profile(s) declared, input '{}' has {}", d.name, d.profiles.size(),
                                     declared.front().name, profiles));
    if (i >= inputs.size()) continue;
    const TensorInfo& info = net.tensor(inputs[i]);
    if (info.name != d.name) {
      problems.push_back(fmt::format("input {} is '{}' in the network, '{}' in the declaration", i, info.name, d.name));
      continue;
    }
    if (d.dtype && *d.dtype != info.desc.dtype)
      problems.push_back(fmt::format("input '{}': declared {}, the network takes {}", d.name, data_type_name(*d.dtype),
                                     data_type_name(info.desc.dtype)));
    for (size_t p = 0; p < d.profiles.size(); ++p) {
      const ShapeRange& r = d.profiles[p];
      const Dims& net_shape = info.desc.shape;
      for (const Dims* s : {&r.min, &r.opt, &r.max}) {
        if (s->rank() != net_shape.rank()) {
          problems.push_back(fmt::format("input '{}' profile {}: shape {} has rank {}, the network's {} has rank {}", d.name, p,
                                         s->to_string(), s->rank(), net_shape.to_string(), net_shape.rank()));
          break;
        }
      }
      if (r.min.rank() != net_shape.rank() || r.opt.rank() != net_shape.rank() || r.max.rank() != net_shape.rank()) continue;
      for (size_t k = 0; k < net_shape.rank(); ++k) {
        if (r.min[k] < 0 || r.min[k] > r.opt[k] || r.opt[k] > r.max[k])
          problems.push_back(fmt::format("input '{}' profile {} dim {}: needs 0 <= min <= opt <= max, got {} / {} / {}", d.name, p,
                                         k, r.min[k], r.opt[k], r.max[k]));
        else if (net_shape[k] >= 0 && (r.min[k] != net_shape[k] || r.max[k] != net_shape[k]))
          problems.push_back(fmt::format("input '{}' profile {} dim {}: the network fixes it to {}, declared {}..{}", d.name, p, k,
                                         net_shape[k], r.min[k], r.max[k]));
      }
    }
  }
  return problems;
}

// Long builds say what they are doing about once a second, unless quiet or told otherwise.
BuildProgressFn progress_reporter(const EngineBuild& build) {
  if (build.progress) return build.progress;
  if (build.quiet) return nullptr;
  using Clock = std::chrono::steady_clock;
  auto last = std::make_shared<Clock::time_point>(Clock::now());
  std::string name = build.name;
  return [last, name](const std::string& message) {
    const auto now = Clock::now();
    if (now - *last < std::chrono::seconds(1)) return;
    *last = now;
    std::fprintf(stderr, "tensoracle build %s: %s\n", name.c_str(), message.c_str());
  };
}

}  // namespace

std::map<std::string, std::string> BuilderSettings::to_manifest() const {
  return {{"workspace_limit_bytes", std::to_string(workspace_limit_bytes)},
          {"optimization_level", std::to_string(optimization_level)},
          {"timing_iterations", std::to_string(timing_iterations)},
          {"auxiliary_streams", std::to_string(auxiliary_streams)},
          {"deterministic_replay", deterministic_replay ? "on" : "off"},
          {"tf32", "off"}};
}

EngineBuild& EngineBuild::add_input(std::string input_name, std::vector<ShapeRange> ranges, std::optional<DataType> type) {
  inputs.push_back(InputDeclaration{std::move(input_name), type, std::move(ranges)});
  return *this;
}

Result<PreparedBuild> prepare_build(const EngineBuild& build, FileHashCache* sidecar) {
  const std::string what = fmt::format("engine '{}'", build.name);
  if (build.name.empty()) return invalid_argument("EngineBuild: the engine name is empty");
  if (!build.graph) return invalid_argument("{}: no graph function", what);
  if (build.settings.optimization_level < 0 || build.settings.optimization_level > 5)
    return invalid_argument("{}: optimization level {} is outside 0..5", what, build.settings.optimization_level);
  if (build.settings.auxiliary_streams < 0 || build.settings.auxiliary_streams > 1)
    return invalid_argument("{}: auxiliary streams must be 0 or 1, got {}", what, build.settings.auxiliary_streams);
  if (build.settings.timing_iterations < 1)
    return invalid_argument("{}: timing iterations must be at least 1, got {}", what, build.settings.timing_iterations);
  std::optional<Weights> weights = build.weights;
  if (!weights) {
    if (build.weights_path.empty()) return invalid_argument("{}: no weights (set weights or weights_path)", what);
    auto opened = Weights::open(build.weights_path);
    if (!opened.is_ok()) return opened.status().with_context(what);
    weights = std::move(opened).value();
  }

  Network net;
  Status defined = build.graph(net, *weights);
  if (defined.is_ok()) defined = net.status();
  if (!defined.is_ok()) return defined.with_context(fmt::format("{}: the graph function failed", what));

  std::vector<InputDeclaration> declared = build.inputs;
  if (declared.empty()) {
    for (Tensor t : net.inputs()) {
      const TensorInfo& info = net.tensor(t);
      if (!info.desc.shape.is_static())
        return invalid_argument("{}: input '{}' is {}; declare its shape range (dynamic dims need one)", what, info.name,
                                info.desc.to_string());
      declared.push_back(InputDeclaration{info.name, info.desc.dtype, {ShapeRange::fixed(info.desc.shape)}});
    }
  }
  std::vector<std::string> problems = declaration_problems(net, declared);
  if (!problems.empty()) return invalid_argument("{}: the declared inputs do not match the network: {}", what, join(problems, "; "));

  PreparedBuild prepared{std::move(net), *weights, {}, {}};
  const Network& network = prepared.network;
  const size_t num_profiles = declared.front().profiles.size();
  std::vector<OptimizationProfile> profiles(num_profiles);
  for (const InputDeclaration& d : declared) {
    IoTensor io{d.name, true, network.tensor(*network.find_tensor(d.name)).desc.dtype, "linear", d.profiles};
    prepared.io_table.tensors.push_back(std::move(io));
    for (size_t p = 0; p < num_profiles; ++p) profiles[p][d.name] = d.profiles[p];
  }
  // Output ranges: shape inference at each profile's min, opt and max.
  std::vector<IoTensor> outputs;
  for (Tensor t : network.outputs()) outputs.push_back(IoTensor{network.tensor(t).name, false, network.tensor(t).desc.dtype, "linear", {}});
  for (size_t p = 0; p < num_profiles; ++p) {
    std::map<std::string, Dims> at[3];
    for (const InputDeclaration& d : declared) {
      at[0][d.name] = d.profiles[p].min;
      at[1][d.name] = d.profiles[p].opt;
      at[2][d.name] = d.profiles[p].max;
    }
    std::map<std::string, Dims> shapes[3];
    static const char* const kPoint[3] = {"min", "opt", "max"};
    for (int k = 0; k < 3; ++k) {
      auto inferred = backends::cpu::infer_output_shapes(network, at[k]);
      if (!inferred.is_ok())
        return inferred.status().with_context(fmt::format("{}: profile {} at its {} shapes", what, p, kPoint[k]));
      shapes[k] = std::move(inferred).value();
    }
    for (IoTensor& o : outputs) o.profiles.push_back(ShapeRange{shapes[0][o.name], shapes[1][o.name], shapes[2][o.name]});
  }
  for (IoTensor& o : outputs) prepared.io_table.tensors.push_back(std::move(o));
  TO_RETURN_IF_ERROR(prepared.io_table.validate().with_context(what));

  // The key manifest.
  KeyManifest& m = prepared.manifest;
  m.engine_name = build.name;
  m.graph_version = build.graph_version;
  TO_ASSIGN_OR_RETURN(m.graph_hash, structural_hash(network));
  std::set<std::string> used_weights;
  for (size_t i = 0; i < network.num_nodes(); ++i) {
    const Node& node = network.node(i);
    static const std::string kPrefix = "weights:";
    if (node.constant && node.constant->source.compare(0, kPrefix.size(), kPrefix) == 0)
      used_weights.insert(node.constant->source.substr(kPrefix.size()));
  }
  TO_ASSIGN_OR_RETURN(m.weights_hash,
                      weights_content_hash(*weights, std::vector<std::string>(used_weights.begin(), used_weights.end()), sidecar));
  m.profiles = std::move(profiles);
  m.builder_settings = build.settings.to_manifest();
  if (build.settings.deterministic_replay) {
    if (build.settings.tactic_record.empty())
      return invalid_argument("{}: deterministic replay needs a tactic record (an engine file built before)", what);
    auto record_hash = sha256_file_hex(build.settings.tactic_record);
    if (!record_hash.is_ok()) return record_hash.status().with_context(fmt::format("{}: the tactic record", what));
    m.builder_settings["tactic_record_sha256"] = *record_hash;
  }
  m.plugins = build.plugins;
  TO_ASSIGN_OR_RETURN(m.environment, probe_environment(build.backend));
  return prepared;
}

namespace {

EngineWriter writer_for(const PreparedBuild& prepared) {
  EngineWriter writer;
  writer.set_manifest_json(manifest_to_json(prepared.manifest));
  writer.set_environment(prepared.manifest.environment, prepared.manifest.plugins);
  writer.set_io_table(prepared.io_table);
  return writer;
}

Result<EngineWriter> plan_cpu_engine(const EngineBuild& build, const PreparedBuild& prepared, const BuildProgressFn& progress) {
  backends::cpu::PlanProgressFn on_layer;
  if (progress)
    on_layer = [&](size_t i, size_t n, const Node& node, const std::string& tactic) {
      progress(fmt::format("layer {}/{} {} ({}): tactic {}", i + 1, n, node.name, op_kind_name(node.kind), tactic));
    };
  std::map<std::string, Dims> opt;
  for (const IoTensor& t : prepared.io_table.tensors)
    if (t.is_input) opt[t.name] = t.profiles.front().opt;
  auto plan = backends::cpu::make_cpu_plan(prepared.network, opt, on_layer);
  if (!plan.is_ok()) return plan.status().with_context(fmt::format("engine '{}'", build.name));
  EngineWriter writer = writer_for(prepared);
  writer.set_plan(std::move(plan->json));
  for (backends::PlanBlob& blob : plan->blobs)
    TO_RETURN_IF_ERROR(writer.add_blob(blob.name, blob.view.data, blob.view.byte_size(), blob.owner));
  return writer;
}

#ifdef TENSORACLE_HAVE_CUDA_BACKEND
// The tactic choices recorded in a cuda engine file, by step anchor name.
Result<std::map<std::string, std::pair<std::string, nlohmann::json>>> recorded_tactics(const std::string& path) {
  TO_ASSIGN_OR_RETURN(EngineFile file, EngineFile::open(path));
  if (file.environment().backend != "cuda")
    return invalid_argument("tactic record '{}' is a '{}' engine; replay needs a cuda engine", path, file.environment().backend);
  const std::string_view text = file.plan().as_string_view();
  nlohmann::json plan = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
  if (plan.is_discarded() || !plan.contains("layers") || !plan["layers"].is_array())
    return corrupt_data("tactic record '{}': the plan has no layer list", path);
  std::map<std::string, std::pair<std::string, nlohmann::json>> out;
  for (const nlohmann::json& layer : plan["layers"]) {
    if (!layer.contains("name") || !layer.contains("family") || !layer.contains("choice") || !layer["name"].is_string() ||
        !layer["family"].is_string())
      return corrupt_data("tactic record '{}': a layer lacks name, family or choice", path);
    out[layer["name"].get<std::string>()] = {layer["family"].get<std::string>(), layer["choice"]};
  }
  return out;
}

Result<EngineWriter> plan_cuda_engine(const EngineBuild& build, const PreparedBuild& prepared, const BuildProgressFn& progress) {
  backends::cuda::PlanOptions options;
  options.optimization_level = build.settings.optimization_level;
  options.timing_iterations = build.settings.timing_iterations;
  options.workspace_limit_bytes = build.settings.workspace_limit_bytes;
  options.auxiliary_streams = build.settings.auxiliary_streams;
  if (build.settings.deterministic_replay) {
    TO_ASSIGN_OR_RETURN(options.replay, recorded_tactics(build.settings.tactic_record));
  }
  backends::cuda::StepProgressFn on_step;
  if (progress) on_step = [&](size_t, size_t, const std::string& message) { progress(message); };
  auto plan = backends::cuda::make_cuda_plan(prepared.network, prepared.manifest.profiles, options, on_step);
  if (!plan.is_ok()) return plan.status().with_context(fmt::format("engine '{}'", build.name));
  backends::cuda::SerializedPlan serialized = backends::cuda::serialize_plan(*plan);
  EngineWriter writer = writer_for(prepared);
  writer.set_plan(std::move(serialized.json));
  for (backends::PlanBlob& blob : serialized.blobs)
    TO_RETURN_IF_ERROR(writer.add_blob(blob.name, blob.view.data, blob.view.byte_size(), blob.owner));
  return writer;
}
#endif

}  // namespace

Result<EngineWriter> plan_engine(const EngineBuild& build, const PreparedBuild& prepared) {
  const std::string& backend = prepared.manifest.environment.backend;
  BuildProgressFn progress = progress_reporter(build);
  if (backend == "cpu") return plan_cpu_engine(build, prepared, progress);
#ifdef TENSORACLE_HAVE_CUDA_BACKEND
  if (backend == "cuda") return plan_cuda_engine(build, prepared, progress);
#endif
  return unsupported("engine '{}': this build of tensoracle has no '{}' backend (build with TENSORACLE_BUILD_CUDA=ON)", build.name,
                     backend);
}

Result<std::string> build_serialized_engine(const EngineBuild& build) {
  TO_ASSIGN_OR_RETURN(PreparedBuild prepared, prepare_build(build));
  TO_ASSIGN_OR_RETURN(EngineWriter writer, plan_engine(build, prepared));
  return writer.to_bytes();
}

Result<Dims> parse_dims(const std::string& text) {
  std::vector<int64_t> dims;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t x = text.find('x', pos);
    const std::string part = text.substr(pos, x == std::string::npos ? std::string::npos : x - pos);
    if (part.empty() || part.size() > 18 || part.find_first_not_of("0123456789") != std::string::npos)
      return invalid_argument("shape '{}': '{}' is not a non-negative dimension (write dims like 1x3x32x32)", text, part);
    dims.push_back(std::stoll(part));
    if (x == std::string::npos) break;
    pos = x + 1;
  }
  return Dims(std::move(dims));
}

Result<std::pair<std::string, ShapeRange>> parse_input_spec(const std::string& text) {
  std::vector<std::string> parts;
  size_t pos = 0;
  for (size_t colon; (colon = text.find(':', pos)) != std::string::npos; pos = colon + 1) parts.push_back(text.substr(pos, colon - pos));
  parts.push_back(text.substr(pos));
  if ((parts.size() != 2 && parts.size() != 4) || parts[0].empty())
    return invalid_argument("input '{}': write NAME:DIMS or NAME:MIN:OPT:MAX (dims like 1x3x32x32)", text);
  std::vector<Dims> shapes;
  for (size_t i = 1; i < parts.size(); ++i) {
    auto dims = parse_dims(parts[i]);
    if (!dims.is_ok()) return dims.status().with_context(fmt::format("input '{}'", text));
    shapes.push_back(std::move(dims).value());
  }
  ShapeRange range = shapes.size() == 1 ? ShapeRange::fixed(shapes[0]) : ShapeRange{shapes[0], shapes[1], shapes[2]};
  return std::make_pair(parts[0], range);
}

}  // namespace tensoracle
