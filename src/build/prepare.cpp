// prepare_build (build.h): the network defined and checked against the declared inputs, the
// output shape ranges, the I/O table and the key manifest.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "backends/plan_network.h"
#include "core/errors.h"
#include "passes/passes.h"
#include "tensoracle/build.h"
#include "tensoracle/hashing.h"

namespace tensoracle {

namespace {

// The declarations in the network's input order: they are matched by name, so the order they
// were declared in (`--input` flags, a map of arrays) does not matter. Names the network lacks,
// inputs left undeclared and names declared twice are problems, one sentence each.
std::vector<InputDeclaration> in_network_order(const Network& net, const std::vector<InputDeclaration>& declared,
                                               std::vector<std::string>& problems) {
  std::vector<std::string> names;
  for (Tensor t : net.inputs()) names.push_back(net.tensor(t).name);
  std::map<std::string, const InputDeclaration*> by_name;
  for (const InputDeclaration& d : declared) {
    if (std::find(names.begin(), names.end(), d.name) == names.end())
      problems.push_back(fmt::format("input '{}' is declared, but the network has no input of that name (its inputs: {})", d.name,
                                     fmt::join(names, ", ")));
    else if (!by_name.emplace(d.name, &d).second)
      problems.push_back(fmt::format("input '{}' is declared twice", d.name));
  }
  std::vector<InputDeclaration> ordered;
  for (const std::string& name : names) {
    auto it = by_name.find(name);
    if (it == by_name.end())
      problems.push_back(fmt::format("input '{}' of the network is not declared", name));
    else
      ordered.push_back(*it->second);
  }
  return ordered;
}

// Every way the declared inputs (in the network's order) disagree with the network's, one
// sentence each.
void add_declaration_problems(const Network& net, const std::vector<InputDeclaration>& declared, std::vector<std::string>& problems) {
  const auto& inputs = net.inputs();
  const size_t profiles = declared.empty() ? 0 : declared.front().profiles.size();
  for (size_t i = 0; i < declared.size(); ++i) {
    const InputDeclaration& d = declared[i];
    if (d.profiles.empty()) problems.push_back(fmt::format("input '{}': no shape declared", d.name));
    if (d.profiles.size() != profiles)
      problems.push_back(fmt::format("input '{}': {} profile(s) declared, input '{}' has {}", d.name, d.profiles.size(),
                                     declared.front().name, profiles));
    const TensorInfo& info = net.tensor(inputs[i]);
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
}

// The fingerprints of the plugins the network's layers use, each once: what the key and the
// engine record. A layer whose plugin is not loaded is an error naming both.
Result<std::vector<PluginFingerprint>> used_plugins(const Network& network) {
  std::vector<PluginFingerprint> used;
  for (size_t i = 0; i < network.num_nodes(); ++i) {
    const Node& node = network.node(i);
    const auto* attrs = node.attributes<PluginAttributes>();
    if (attrs == nullptr) continue;
    TO_ASSIGN_OR_RETURN_CONTEXT(const RegisteredPlugin* plugin, network.plugins().find(attrs->plugin, attrs->version),
                                fmt::format("layer '{}' (plugin)", node.name));
    PluginFingerprint fingerprint = plugin->fingerprint();
    if (std::find(used.begin(), used.end(), fingerprint) == used.end()) used.push_back(std::move(fingerprint));
  }
  return used;
}

}  // namespace

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
  const DataType precision = build.settings.precision;
  if (precision != DataType::kFloat32 && precision != DataType::kFloat16 && precision != DataType::kBFloat16)
    return invalid_argument("{}: precision {} is not fp32, fp16 or bf16", what, data_type_name(precision));
  if (build.settings.keep_fp32)
    for (const std::string& entry : *build.settings.keep_fp32)
      TO_RETURN_IF_ERROR(passes::check_keep_fp32_entry(entry).with_context(what));
  // The backend first: a name this build lacks fails before the graph is defined.
  TO_ASSIGN_OR_RETURN_CONTEXT(auto environment, probe_environment(build.backend), what);
  std::optional<Weights> weights = build.weights;
  if (!weights) {
    if (!build.weights_path.empty()) {
      TO_ASSIGN_OR_RETURN_CONTEXT(weights, Weights::open(build.weights_path), what);
    } else if (!build.source.empty()) {
      weights = Weights::none();
    } else {
      return invalid_argument("{}: no weights (set weights or weights_path)", what);
    }
  }

  Network net;
  net.set_plugins(build.plugins);
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
  // Profiles are ranges of inputs: a graph of constants alone has none to build.
  if (net.inputs().empty()) return unsupported("{}: the network has no inputs; an engine needs at least one", what);
  std::vector<std::string> problems;
  declared = in_network_order(net, declared, problems);
  if (problems.empty()) add_declaration_problems(net, declared, problems);
  if (!problems.empty()) return invalid_argument("{}: the declared inputs do not match the network: {}", what, fmt::join(problems, "; "));

  PreparedBuild prepared{std::move(net), *weights, {}, {}};
  const Network& network = prepared.network;
  const size_t num_profiles = declared.front().profiles.size();
  std::vector<OptimizationProfile> profiles(num_profiles);
  for (const InputDeclaration& d : declared) {
    IoTensor io{d.name, true, network.tensor(*network.find_tensor(d.name)).desc.dtype, TensorFormat::kLinear, d.profiles};
    prepared.io_table.tensors.push_back(std::move(io));
    for (size_t p = 0; p < num_profiles; ++p) profiles[p][d.name] = d.profiles[p];
  }
  // Output ranges: shape inference at each profile's min, opt and max.
  std::vector<IoTensor> outputs;
  for (Tensor t : network.outputs()) outputs.push_back(IoTensor{network.tensor(t).name, false, network.tensor(t).desc.dtype, TensorFormat::kLinear, {}});
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
      TO_ASSIGN_OR_RETURN_CONTEXT(shapes[k], backends::infer_output_shapes(network, at[k]),
                                  fmt::format("{}: profile {} at its {} shapes", what, p, kPoint[k]));
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
  TO_ASSIGN_OR_RETURN(m.plugins, used_plugins(network));
  m.source = build.source;
  m.environment = std::move(environment);

  // The precision pass last: the key names the defined graph and the setting, and the backend
  // plans the converted network, whose I/O (fp32) is the I/O table's.
  if (precision != DataType::kFloat32) {
    passes::PrecisionOptions options;
    options.compute = precision;
    if (build.settings.keep_fp32) options.keep_fp32 = *build.settings.keep_fp32;
    passes::PrecisionReport report;
    TO_ASSIGN_OR_RETURN_CONTEXT(prepared.network, passes::convert_precision(prepared.network, options, &report), what);
    prepared.log = report.lines(precision);
  }
  return prepared;
}

}  // namespace tensoracle
