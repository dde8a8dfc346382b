// load_pipeline (workflow.h): the pipeline file's schema (docs/workflow.md), checked strictly.
#include <fmt/format.h>

#include <cstdlib>
#include <fstream>
#include <filesystem>
#include <set>
#include <sstream>

#include "backends/registry.h"
#include "core/errors.h"
#include "tensoracle/hashing.h"
#include "tensoracle/workflow.h"
#include "workflow/toml_reader.h"

namespace tensoracle {

namespace {

namespace fs = std::filesystem;
using workflow::TableReader;

constexpr uintmax_t kMaxPipelineBytes = 1 << 20;

Result<std::string> read_small_file(const std::string& path) {
  std::error_code ec;
  const uintmax_t size = fs::file_size(path, ec);
  if (ec) return not_found("pipeline '{}': {}", path, ec.message());
  if (size > kMaxPipelineBytes) return invalid_argument("pipeline '{}' is {} bytes (at most {})", path, size, kMaxPipelineBytes);
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in) return io_error("cannot read pipeline '{}'", path);
  return text.str();
}

// A path value: ${NAME} replaced by the environment variable, then made relative to the
// pipeline's folder unless absolute.
Result<std::string> resolve_path(TableReader& r, const std::string& key, const std::string& value, const fs::path& base) {
  std::string out;
  for (size_t i = 0; i < value.size();) {
    if (value.compare(i, 2, "${") != 0) {
      out += value[i++];
      continue;
    }
    const size_t close = value.find('}', i + 2);
    if (close == std::string::npos) return r.error(key, fmt::format("'{}': '${{' without a closing '}}'", value));
    const std::string name = value.substr(i + 2, close - i - 2);
    const char* env = name.empty() ? nullptr : std::getenv(name.c_str());
    if (!env || !*env) return r.error(key, fmt::format("'{}' uses the environment variable {}, which is not set", value, name));
    out += env;
    i = close + 1;
  }
  if (out.empty()) return r.error(key, "must not be empty");
  const fs::path p(out);
  return (p.is_absolute() ? p : base / p).lexically_normal().string();
}

Result<std::string> required_path(TableReader& r, const std::string& key, const fs::path& base) {
  TO_ASSIGN_OR_RETURN(std::string value, r.required_string(key));
  return resolve_path(r, key, value, base);
}

// [inputs] / [reference]: file = PATH, arrays = [NAME...] or {TENSOR = ARRAY, ...}.
Result<ArraySelection> read_selection(const toml::table* table, const std::string& name, const std::string& file,
                                      const fs::path& base, const std::string& root_where) {
  if (!table) return invalid_argument("{}: the table [{}] is required", root_where, name);
  TableReader r(*table, file, name);
  ArraySelection s;
  TO_ASSIGN_OR_RETURN(s.file, required_path(r, "file", base));
  const toml::node* arrays = r.node("arrays");
  if (arrays && arrays->is_array()) {
    TO_ASSIGN_OR_RETURN(std::optional<std::vector<std::string>> list, r.strings("arrays"));
    for (const std::string& a : list.value_or(std::vector<std::string>{})) s.arrays[a] = a;
    if (s.arrays.empty()) return r.error("arrays", "an empty selection (leave the key out to take every array by name)");
  } else if (arrays && arrays->is_table()) {
    for (const auto& [key, value] : *arrays->as_table()) {
      if (!value.is_string())
        return invalid_argument("{}: {}.arrays.{}: expected the array's name in the file (a string), found {}",
                                workflow::where(file, value), name, key.str(), workflow::toml_type_name(value));
      s.arrays[std::string(key.str())] = std::string(*value.value<std::string_view>());
    }
  } else if (arrays) {
    return r.error("arrays", "expected an array of names or a table {tensor = \"array in the file\"}, found " +
                                 workflow::toml_type_name(*arrays));
  }
  TO_RETURN_IF_ERROR(r.finish());
  return s;
}

// limits = "FILE.json" or an inline table of the limits format (docs/compare.md).
Result<Limits> read_limits(TableReader& r, const fs::path& base, std::string& source) {
  const toml::node* n = r.node("limits");
  if (!n) return r.error("", "the key 'limits' is required (a limits file, or a table of the limits format)");
  if (n->is_string()) {
    TO_ASSIGN_OR_RETURN(std::string path, resolve_path(r, "limits", std::string(*n->value<std::string_view>()), base));
    source = path;
    auto limits = read_limits_file(path);
    if (!limits.is_ok()) return r.error("limits", limits.status().message());
    return limits;
  }
  if (!n->is_table()) return r.error("limits", "expected a limits file name or a table, found " + workflow::toml_type_name(*n));
  std::ostringstream json;
  json << toml::json_formatter{*n->as_table()};
  source = fmt::format("{} [{}]", workflow::where(r.file(), *n), r.key_path("limits"));
  return parse_limits(json.str(), source);
}

Result<CandidateSpec> read_candidate(const toml::table& t, const std::string& file, const std::string& path, bool stage3) {
  TableReader r(t, file, path);
  CandidateSpec c;
  c.where = workflow::where(file, t);
  TO_ASSIGN_OR_RETURN(std::optional<std::string> kind, r.string("kind"));
  TO_ASSIGN_OR_RETURN(c.graph, r.required_string("graph"));
  TO_ASSIGN_OR_RETURN(std::optional<std::string> name, r.string("name"));
  std::optional<std::string> lower;
  if (stage3) {
    TO_ASSIGN_OR_RETURN(lower, r.string("lower_precision_graph"));
  }
  c.kind = kind.value_or("graph");
  if (c.kind != "graph")
    return r.error("kind", fmt::format("'{}' is not a candidate kind of this version (known: graph; docs/workflow.md says "
                                       "which kinds are planned)",
                                       c.kind));
  c.name = name.value_or(c.graph);
  c.lower_precision_graph = lower.value_or("");
  TO_RETURN_IF_ERROR(r.finish());
  return c;
}

Result<std::vector<CandidateSpec>> read_candidates(TableReader& stage, bool stage3) {
  std::vector<CandidateSpec> out;
  TO_ASSIGN_OR_RETURN(const toml::array* list, stage.array("candidate"));
  if (!list) return out;
  for (size_t i = 0; i < list->size(); ++i) {
    const toml::node& item = *list->get(i);
    const std::string path = stage.key_path(fmt::format("candidate[{}]", i));
    if (!item.is_table())
      return invalid_argument("{}: {}: expected a table ([[{}]]), found {}", workflow::where(stage.file(), item), path,
                              stage.key_path("candidate"), workflow::toml_type_name(item));
    TO_ASSIGN_OR_RETURN(CandidateSpec c, read_candidate(*item.as_table(), stage.file(), path, stage3));
    out.push_back(std::move(c));
  }
  return out;
}

Result<MeasureSpec> read_measure(const toml::table& t, const std::string& file, const std::string& path) {
  TableReader r(t, file, path);
  MeasureSpec m;
  m.where = workflow::where(file, t);
  TO_ASSIGN_OR_RETURN(m.name, r.required_string("name"));
  TO_ASSIGN_OR_RETURN(m.kind, r.required_string("kind"));
  TO_ASSIGN_OR_RETURN(std::optional<int64_t> k, r.integer("k"));
  TO_ASSIGN_OR_RETURN(auto command, r.strings("command"));
  TO_ASSIGN_OR_RETURN(std::optional<double> timeout, r.number("timeout_seconds"));
  TO_ASSIGN_OR_RETURN(auto outputs, r.strings("outputs"));
  TO_ASSIGN_OR_RETURN(m.min, r.number("min"));
  TO_ASSIGN_OR_RETURN(m.max, r.number("max"));
  TO_RETURN_IF_ERROR(r.finish());
  for (char ch : m.name)
    if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_'))
      return r.error("name", fmt::format("'{}': a measure's name is lower-case [a-z0-9_]", m.name));
  static const std::set<std::string> kKinds = {"psnr", "snr", "topk_agreement", "command"};
  if (!kKinds.count(m.kind)) return r.error("kind", fmt::format("'{}' (known: psnr, snr, topk_agreement, command)", m.kind));
  if (k && m.kind != "topk_agreement") return r.error("k", "only a topk_agreement measure has k");
  if (m.kind == "topk_agreement") {
    m.k = static_cast<int>(k.value_or(1));
    if (k && (*k < 1 || *k > 1000000)) return r.error("k", fmt::format("{} (must be >= 1)", *k));
  }
  if (command && m.kind != "command") return r.error("command", "only a measure of kind \"command\" has a command");
  if (m.kind == "command") {
    if (!command || command->empty()) return r.error("", "a measure of kind \"command\" needs command = [PROGRAM, ARGS...]");
    m.command = *command;
  }
  if (timeout && m.kind != "command") return r.error("timeout_seconds", "only a measure of kind \"command\" has a timeout");
  if (timeout && !(*timeout > 0 && *timeout <= 86400)) return r.error("timeout_seconds", fmt::format("{} (0 < t <= 86400)", *timeout));
  m.timeout_seconds = timeout.value_or(60);
  if (outputs) m.outputs = *outputs;
  if (!m.min && !m.max) return r.error("", "a measure needs a bound: min, max or both (a measure without a limit gates nothing)");
  return m;
}

Status read_stage4(TableReader& r, SpeedStage& s) {
  s.enabled = true;
  TO_ASSIGN_OR_RETURN(std::optional<double> min_speedup, r.number("min_speedup"));
  TO_ASSIGN_OR_RETURN(std::optional<int64_t> batch, r.integer("batch"));
  TO_ASSIGN_OR_RETURN(std::optional<std::string> mode, r.string("mode"));
  TO_ASSIGN_OR_RETURN(std::optional<int64_t> warmup, r.integer("warmup"));
  TO_ASSIGN_OR_RETURN(std::optional<int64_t> iterations, r.integer("iterations"));
  TO_ASSIGN_OR_RETURN(std::optional<int64_t> group, r.integer("throughput_group"));
  TO_ASSIGN_OR_RETURN(std::optional<double> confidence, r.number("confidence"));
  TO_ASSIGN_OR_RETURN(std::optional<int64_t> resamples, r.integer("resamples"));
  TO_ASSIGN_OR_RETURN(std::optional<int64_t> seed, r.integer("seed"));
  TO_ASSIGN_OR_RETURN(std::optional<bool> load_check, r.boolean("load_check"));
  TO_ASSIGN_OR_RETURN(std::optional<double> utilization, r.number("max_utilization_before_percent"));
  TO_ASSIGN_OR_RETURN(const toml::table* backends, r.table("backend"));
  if (!min_speedup) return r.error("", "the key 'min_speedup' is required (e.g. 1.2: the candidate must be 1.2x as fast)");
  if (!(*min_speedup > 0 && *min_speedup < 1e6)) return r.error("min_speedup", fmt::format("{} (must be > 0)", *min_speedup));
  s.min_speedup = *min_speedup;
  if (batch && (*batch < 1 || *batch > 1 << 20)) return r.error("batch", fmt::format("{} (1 ..  1048576)", *batch));
  s.batch = batch.value_or(0);
  if (mode) {
    auto parsed = parse_timing_mode(*mode);
    if (!parsed.is_ok()) return r.error("mode", parsed.status().message());
    s.mode = *parsed;
  }
  BenchSettings& b = s.bench;
  if (warmup && (*warmup < 0 || *warmup > 1000000)) return r.error("warmup", fmt::format("{} (0 .. 1000000)", *warmup));
  if (iterations && (*iterations < 10 || *iterations > 1000000))
    return r.error("iterations", fmt::format("{} (10 .. 1000000 rounds)", *iterations));
  if (group && (*group < 1 || *group > 100000)) return r.error("throughput_group", fmt::format("{} (1 .. 100000)", *group));
  if (confidence && !(*confidence >= 0.5 && *confidence < 1)) return r.error("confidence", fmt::format("{} (0.5 <= c < 1)", *confidence));
  if (resamples && (*resamples < 100 || *resamples > 1000000)) return r.error("resamples", fmt::format("{} (100 .. 1000000)", *resamples));
  if (seed && *seed < 0) return r.error("seed", fmt::format("{} (must be >= 0)", *seed));
  if (utilization && !(*utilization >= 0 && *utilization <= 100))
    return r.error("max_utilization_before_percent", fmt::format("{} (0 .. 100)", *utilization));
  b.warmup = static_cast<int>(warmup.value_or(b.warmup));
  b.iterations = static_cast<int>(iterations.value_or(b.iterations));
  b.throughput_group = static_cast<int>(group.value_or(b.throughput_group));
  b.bootstrap.confidence = confidence.value_or(b.bootstrap.confidence);
  b.bootstrap.resamples = static_cast<int>(resamples.value_or(b.bootstrap.resamples));
  b.bootstrap.seed = static_cast<uint64_t>(seed.value_or(static_cast<int64_t>(b.bootstrap.seed)));
  b.load_check = load_check.value_or(true);
  b.max_utilization_before_percent = utilization.value_or(b.max_utilization_before_percent);
  b.modes = {s.mode};
  if (backends) {
    for (const auto& [key, value] : *backends) {
      const std::string backend(key.str());
      if (!value.is_table())
        return invalid_argument("{}: stage4.backend.{}: expected a table, found {}", workflow::where(r.file(), value), backend,
                                workflow::toml_type_name(value));
      TableReader br(*value.as_table(), r.file(), "stage4.backend." + backend);
      TO_ASSIGN_OR_RETURN(std::optional<double> target, br.number("min_speedup"));
      TO_RETURN_IF_ERROR(br.finish());
      if (!target || !(*target > 0 && *target < 1e6)) return br.error("min_speedup", "required, a number > 0");
      s.backend_min_speedup[backend] = *target;
    }
  }
  return r.finish();
}

}  // namespace

Result<Pipeline> load_pipeline(const std::string& path) {
  TO_ASSIGN_OR_RETURN(std::string text, read_small_file(path));
  TO_ASSIGN_OR_RETURN(toml::table root, workflow::parse_toml(text, path));
  const fs::path base = fs::absolute(fs::path(path)).parent_path();
  Pipeline p;
  p.path = path;
  p.sha256 = sha256_hex(text);
  TableReader r(root, path, "");
  TO_ASSIGN_OR_RETURN(std::optional<std::string> title, r.string("title"));
  p.title = title.value_or(fs::path(path).stem().string());

  TO_ASSIGN_OR_RETURN(const toml::table* model, r.table("model"));
  if (!model) return invalid_argument("{}: the table [model] is required (package = ...)", path);
  TableReader mr(*model, path, "model");
  TO_ASSIGN_OR_RETURN(p.package, required_path(mr, "package", base));
  TO_ASSIGN_OR_RETURN(std::optional<std::string> weights, mr.string("weights"));
  if (weights) {
    TO_ASSIGN_OR_RETURN(p.weights, resolve_path(mr, "weights", *weights, base));
  }
  TO_ASSIGN_OR_RETURN(std::optional<std::vector<std::string>> plugins, mr.strings("plugins"));
  for (size_t i = 0; plugins && i < plugins->size(); ++i) {
    TO_ASSIGN_OR_RETURN(std::string library, resolve_path(mr, fmt::format("plugins[{}]", i), (*plugins)[i], base));
    p.plugins.push_back(std::move(library));
  }
  TO_ASSIGN_OR_RETURN(std::optional<std::string> backend, mr.string("backend"));
  TO_ASSIGN_OR_RETURN(std::optional<int64_t> level, mr.integer("optimization_level"));
  TO_ASSIGN_OR_RETURN(std::optional<bool> fast, mr.boolean("fp8_fast_accumulation"));
  TO_RETURN_IF_ERROR(mr.finish());
  p.fp8_fast_accumulation = fast.value_or(false);
  // Whether this build has the backend is checked when the pipeline runs (--backend may differ).
  p.backend = backend.value_or(std::string(backends::kReferenceBackend));
  if (level && (*level < 0 || *level > 5)) return mr.error("optimization_level", fmt::format("{} (0 .. 5)", *level));
  p.optimization_level = static_cast<int>(level.value_or(-1));

  TO_ASSIGN_OR_RETURN(const toml::table* inputs, r.table("inputs"));
  TO_ASSIGN_OR_RETURN(p.inputs, read_selection(inputs, "inputs", path, base, path));
  TO_ASSIGN_OR_RETURN(const toml::table* reference, r.table("reference"));
  TO_ASSIGN_OR_RETURN(p.reference, read_selection(reference, "reference", path, base, path));

  TO_ASSIGN_OR_RETURN(const toml::table* stage1, r.table("stage1"));
  if (!stage1) return invalid_argument("{}: the table [stage1] is required (graph = the fp32 graph, limits = ...)", path);
  TableReader s1(*stage1, path, "stage1");
  TO_ASSIGN_OR_RETURN(p.fp32_graph, s1.required_string("graph"));
  TO_ASSIGN_OR_RETURN(p.stage1_limits, read_limits(s1, base, p.stage1_limits_source));
  TO_RETURN_IF_ERROR(s1.finish());

  TO_ASSIGN_OR_RETURN(const toml::table* stage2, r.table("stage2"));
  if (stage2) {
    TableReader s2(*stage2, path, "stage2");
    TO_ASSIGN_OR_RETURN(p.stage2_limits, read_limits(s2, base, p.stage2_limits_source));
    TO_ASSIGN_OR_RETURN(p.stage2, read_candidates(s2, false));
    TO_ASSIGN_OR_RETURN(const toml::array* measures, s2.array("measure"));
    for (size_t i = 0; measures && i < measures->size(); ++i) {
      const toml::node& item = *measures->get(i);
      const std::string mpath = fmt::format("stage2.measure[{}]", i);
      if (!item.is_table())
        return invalid_argument("{}: {}: expected a table ([[stage2.measure]])", workflow::where(path, item), mpath);
      TO_ASSIGN_OR_RETURN(MeasureSpec m, read_measure(*item.as_table(), path, mpath));
      for (const MeasureSpec& other : p.measures)
        if (other.name == m.name) return invalid_argument("{}: {}: a second measure named '{}'", m.where, mpath, m.name);
      p.measures.push_back(std::move(m));
    }
    TO_RETURN_IF_ERROR(s2.finish());
  }

  TO_ASSIGN_OR_RETURN(const toml::table* stage3, r.table("stage3"));
  if (stage3) {
    TableReader s3(*stage3, path, "stage3");
    TO_ASSIGN_OR_RETURN(p.stage3, read_candidates(s3, true));
    TO_RETURN_IF_ERROR(s3.finish());
    for (const CandidateSpec& c : p.stage3)
      if (!c.lower_precision_graph.empty() && !stage2)
        return invalid_argument("{}: replacement '{}' has a lower_precision_graph, which is gated by stage 2: the "
                                "pipeline needs a [stage2] table with its limits",
                                c.where, c.name);
  }

  TO_ASSIGN_OR_RETURN(const toml::table* stage4, r.table("stage4"));
  if (stage4) {
    TableReader s4(*stage4, path, "stage4");
    TO_RETURN_IF_ERROR(read_stage4(s4, p.stage4));
  }
  TO_RETURN_IF_ERROR(r.finish());

  std::set<std::string> names = {p.fp32_graph};
  for (const auto* list : {&p.stage2, &p.stage3})
    for (const CandidateSpec& c : *list)
      if (!names.insert(c.name).second)
        return invalid_argument("{}: candidate name '{}' is used twice (names must be unique; the stage-1 graph's "
                                "name is taken)",
                                c.where, c.name);
  return p;
}

}  // namespace tensoracle
