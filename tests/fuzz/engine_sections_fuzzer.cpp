// Structure-aware fuzzing of what lies behind an engine's checksum, untrusted input. Each input is an
// engine file; the custom mutator takes it apart (engine_surgery.h), rewrites one of its JSON
// sections structurally -- a number swapped for a boundary value, a string for another name of the
// document, an array element dropped or repeated, a key removed or renamed, a value of another
// type -- and seals the checksum again, so every mutant passes the integrity check and reaches the
// engine validation (engine/engine_validation.h) and the backend's own checks. An input that is
// not an engine is replaced by one of the valid cpu engines built at start-up, so the target needs
// no committed corpus. Each mutant is deserialized, given an execution and, when its smallest
// shapes are small, run on zero inputs: nothing may crash, leak or misbehave under ASan/UBSan.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "engine/engine_validation.h"
#include "host/engine/engine_surgery.h"
#include "host/engine/small_cpu_engine.h"
#include "tensoracle/engine.h"

using namespace tensoracle;
using engine_layout::SectionKind;
using nlohmann::json;

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace {

// y = softmax(reshape(transpose(slice(resize(pad(pool(relu(conv(x)))))))) and z = concat(u @ w, u):
// a little of every kind of shape arithmetic the validation has to bound.
EngineBuild assorted_build() {
  EngineBuild build;
  build.name = "assorted";
  build.graph_version = "1";
  build.graph = [](Network& net, const Weights&) {
    Tensor x = net.add_input("x", DataType::kFloat32, {-1, 3, 8, 8});
    HostArray w = HostArray::zeros(DataType::kFloat32, {2, 3, 3, 3}).value();
    for (int64_t i = 0; i < w.element_count(); ++i) w.data_as<float>()[i] = 0.1f * static_cast<float>(i % 5);
    Tensor y = net.relu(net.convolution(x, net.add_constant(std::move(w), "w"), Tensor{}));
    y = net.pooling(y, PoolingAttributes().set_window({2, 2}));
    y = net.pad(y, PadAttributes().set_pre({0, 0, 1, 1}).set_post({0, 0, 1, 1}));
    y = net.resize(y, ResizeAttributes().set_scales({2.0, 2.0}));
    y = net.slice(y, SliceAttributes().set_start({0, 0, 1, 1}).set_size({1, 2, 8, 8}));
    y = net.transpose(y, TransposeAttributes().set_perm({0, 2, 3, 1}));
    y = net.reshape(y, ReshapeAttributes().set_shape({1, -1}));
    net.mark_output(net.softmax(y), "y");
    Tensor u = net.add_input("u", DataType::kFloat32, {-1, 4});
    HostArray m = HostArray::zeros(DataType::kFloat32, {4, 4}).value();
    for (int64_t i = 0; i < m.element_count(); ++i) m.data_as<float>()[i] = static_cast<float>(i % 3) - 1.0f;
    Tensor mu = net.matmul(u, net.add_constant(std::move(m), "m"));
    net.mark_output(net.reduce(net.concat({mu, u}, ConcatAttributes().set_axis(1)),
                               ReduceAttributes().set_op(ReduceOp::kMean).set_axes({1}).set_keep_dims(true)),
                    "z");
    return net.status();
  };
  build.weights = Weights();
  build.add_input("x", {ShapeRange{{1, 3, 8, 8}, {1, 3, 8, 8}, {1, 3, 8, 8}}});
  build.add_input("u", {ShapeRange{{1, 4}, {2, 4}, {3, 4}}});
  build.backend = "cpu";
  build.quiet = true;
  return build;
}

const std::vector<std::string>& seeds() {
  static const std::vector<std::string> engines = [] {
    std::vector<std::string> out;
    for (const EngineBuild& build : {testing::small_cpu_build(4), assorted_build()})
      if (auto bytes = build_serialized_engine(build); bytes.is_ok()) out.push_back(std::move(bytes).value());
    return out;
  }();
  return engines;
}

// Values that sit on the bounds the validation enforces, or just past them.
json boundary_value(std::mt19937_64& rng) {
  static const int64_t kIntegers[] = {0,           -1,          1,          2,          3,          7,
                                      8,           255,         4096,       65535,      2147483647, 2147483648LL,
                                      -2147483648LL, 4294967296LL, 1099511627776LL, INT64_MAX, INT64_MIN, 20000};
  switch (rng() % 4) {
    case 0: return json(0.5);
    case 1: return json(1e300);
    default: return json(kIntegers[rng() % (sizeof kIntegers / sizeof *kIntegers)]);
  }
}

// Every value of the document, depth first, so one can be picked at random.
void collect(json& value, std::vector<json*>& out) {
  out.push_back(&value);
  if (value.is_structured())
    for (json& child : value) collect(child, out);
}

void collect_strings(const json& value, std::vector<std::string>& out) {
  if (value.is_string()) out.push_back(value.get<std::string>());
  if (value.is_object())
    for (const auto& item : value.items()) out.push_back(item.key());
  if (value.is_structured())
    for (const json& child : value) collect_strings(child, out);
}

void mutate_value(json& doc, std::mt19937_64& rng) {
  std::vector<json*> values;
  collect(doc, values);
  std::vector<std::string> strings = {"fp16", "int8", "bool", "fp32", "LINEAR", "HWC", "HWC8", "linear", "", "cuda", "y", "x"};
  collect_strings(doc, strings);
  json& value = *values[rng() % values.size()];
  const auto any_string = [&] { return strings[rng() % strings.size()]; };
  switch (value.type()) {
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float:
      if (rng() % 3 == 0) value = value.get<double>() + (rng() % 2 ? 1.0 : -1.0);
      else value = boundary_value(rng);
      return;
    case json::value_t::string: value = any_string(); return;
    case json::value_t::array:
      if (value.empty() || rng() % 4 == 0) value.push_back(boundary_value(rng));
      else if (rng() % 2) value.erase(value.begin() + static_cast<std::ptrdiff_t>(rng() % value.size()));
      else value.push_back(value[rng() % value.size()]);
      return;
    case json::value_t::object:
      if (!value.empty() && rng() % 2) {
        auto it = value.begin();
        std::advance(it, static_cast<std::ptrdiff_t>(rng() % value.size()));
        const json moved = *it;
        value.erase(it);
        if (rng() % 2) value[any_string()] = moved;  // renamed (possibly onto another key)
      } else {
        value[any_string()] = boundary_value(rng);
      }
      return;
    default: value = rng() % 2 ? json(any_string()) : boundary_value(rng); return;
  }
}

std::string mutate_engine(const std::string& engine, std::mt19937_64& rng) {
  std::vector<testing::RawSection> sections = testing::split_engine(engine);
  std::vector<testing::RawSection*> json_sections;
  for (testing::RawSection& s : sections)
    if (s.kind != SectionKind::kBlob) json_sections.push_back(&s);
  if (json_sections.empty()) return engine;
  // Mostly the plan and the I/O table, where the sections meet.
  testing::RawSection* target = json_sections[rng() % json_sections.size()];
  for (testing::RawSection* s : json_sections)
    if ((s->kind == SectionKind::kPlan || s->kind == SectionKind::kIoTable) && rng() % 3 != 0) target = s;
  json doc = json::parse(target->bytes, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    target->bytes.resize(target->bytes.size() + 16);
    const size_t size = LLVMFuzzerMutate(reinterpret_cast<uint8_t*>(target->bytes.data()), target->bytes.size() - 16,
                                         target->bytes.size());
    target->bytes.resize(size);
  } else {
    for (int edits = 1 + static_cast<int>(rng() % 3); edits > 0; --edits) mutate_value(doc, rng);
    target->bytes = doc.dump(-1, ' ', false, json::error_handler_t::replace);
  }
  return testing::assemble_engine(sections);
}

// Zero inputs at the profile's smallest shapes, when they and the activations they imply are small.
void run_small(const Engine& engine, const ValidatedEngine& validated) {
  constexpr uint64_t kMaxRunBytes = uint64_t{16} << 20;
  if (validated.min_activation_bytes.empty() || validated.min_activation_bytes[0] > kMaxRunBytes) return;
  auto exec = engine.create_execution(0);
  if (!exec.is_ok()) return;
  std::vector<HostArray> arrays;
  NamedArrayViews inputs;
  for (const IoTensor& t : engine.io_table().tensors) {
    if (!t.is_input) continue;
    auto array = HostArray::zeros(t.dtype, t.profiles[0].min);
    if (!array.is_ok() || array->byte_size() > kMaxRunBytes) return;
    arrays.push_back(std::move(array).value());
    inputs[t.name] = arrays.back().view();
  }
  (void)exec->run_on_host(inputs);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  // Engines are a few kB; the default limit for an empty corpus (4096 bytes) would cut them.
  static std::vector<char*> args(*argv, *argv + *argc);
  static char max_len[] = "-max_len=65536";
  if (std::none_of(args.begin(), args.end(), [](const char* a) { return std::strncmp(a, "-max_len=", 9) == 0; })) {
    args.insert(args.begin() + 1, max_len);
    *argc = static_cast<int>(args.size());
    *argv = args.data();
  }
  (void)seeds();
  return 0;
}

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  std::mt19937_64 rng(seed);
  std::string engine(reinterpret_cast<const char*>(data), size);
  if (testing::split_engine(engine).empty() || rng() % 16 == 0) engine = seeds()[rng() % seeds().size()];
  const std::string mutant = mutate_engine(engine, rng);
  if (mutant.size() > max_size) return 0;
  std::memcpy(data, mutant.data(), mutant.size());
  return mutant.size();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto file = EngineFile::from_bytes(data, size, "fuzz.engine");
  if (!file.is_ok()) return 0;
  (void)check_engine_file(*file);
  auto validated = validate_engine(*file);
  auto engine = Engine::from_file(*file);
  if (!engine.is_ok() || !validated.is_ok()) return 0;
  run_small(*engine, *validated);
  return 0;
}
