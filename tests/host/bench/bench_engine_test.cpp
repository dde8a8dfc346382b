// The harness on the cpu backend: what it times, how it labels it, the A/B run, the inputs.
#include <gtest/gtest.h>

#include "tensoracle/bench.h"
#include "tensoracle/engine.h"

namespace tensoracle {
namespace {

// x -> relu(x @ w): a small engine that takes a measurable moment.
Engine small_engine(float scale) {
  EngineBuild build;
  build.name = "bench_test";
  build.graph_version = "1";
  build.graph = [scale](Network& net, const Weights&) {
    Tensor x = net.add_input("x", DataType::kFloat32, {-1, 64});
    HostArray w = HostArray::zeros(DataType::kFloat32, {64, 64}).value();
    for (int64_t i = 0; i < w.element_count(); ++i) w.data_as<float>()[i] = scale * static_cast<float>(i % 7 - 3);
    net.mark_output(net.relu(net.matmul(x, net.add_constant(std::move(w)))), "y");
    return net.status();
  };
  build.weights = Weights();
  build.add_input("x", {ShapeRange{{1, 64}, {8, 64}, {32, 64}}});
  build.quiet = true;
  auto bytes = build_serialized_engine(build);
  EXPECT_TRUE(bytes.is_ok()) << bytes.status().to_string();
  auto engine = Engine::deserialize(bytes->data(), bytes->size());
  EXPECT_TRUE(engine.is_ok()) << engine.status().to_string();
  return std::move(engine).value();
}

BenchSettings quick() {
  BenchSettings s;
  s.warmup = 2;
  s.iterations = 12;
  s.throughput_group = 3;
  return s;
}

TEST(BenchEngine, TimesEveryModeOnTheHostClockAndSaysSo) {
  const Engine engine = small_engine(0.1f);
  auto inputs = synthetic_inputs(engine, 0, 16);
  ASSERT_TRUE(inputs.is_ok()) << inputs.status().to_string();
  auto report = bench_engine(engine, views_of(*inputs), quick());
  ASSERT_TRUE(report.is_ok()) << report.status().to_string();
  EXPECT_EQ(report->backend, "cpu");
  EXPECT_EQ(report->batch, 16);
  ASSERT_EQ(report->runs.size(), 2u);
  EXPECT_EQ(report->runs[0].mode, TimingMode::kLatency);
  EXPECT_EQ(report->runs[0].group, 1);
  EXPECT_EQ(report->runs[1].mode, TimingMode::kThroughput);
  EXPECT_EQ(report->runs[1].group, 3);
  for (const TimingRun& run : report->runs) {
    EXPECT_EQ(run.clock, "steady_clock");
    EXPECT_EQ(run.execution, "host");
    EXPECT_EQ(run.samples_ms.size(), 12u);
    EXPECT_GT(run.stats.min_ms, 0.0);
    EXPECT_LE(run.stats.min_ms, run.stats.median_ms);
    EXPECT_LE(run.stats.median_ms, run.stats.max_ms);
    EXPECT_DOUBLE_EQ(run.items_per_second, 16 * 1000.0 / run.stats.mean_ms);
  }
  // The host's check: other processes' share of the CPU during the run, whatever it was here.
  EXPECT_EQ(report->load.status, "host");
  // (A run shorter than one clock tick has no share to judge, and says so.)
  EXPECT_TRUE(report->load.host_other_cpu_percent.has_value() || !report->load.notes.empty());
  EXPECT_EQ(report->valid, report->load.isolated);
  EXPECT_EQ(report->valid, report->load.invalid_reasons.empty());
  const std::string text = bench_report_text(*report);
  EXPECT_NE(text.find("host wall clock"), std::string::npos) << text;
  EXPECT_NE(bench_report_json(*report, quick()).find("\"clock\": \"steady_clock\""), std::string::npos);
}

TEST(BenchEngine, PerStepTimesAreUnavailableOnTheCpuAndSaySo) {
  const Engine engine = small_engine(0.1f);
  BenchSettings s = quick();
  s.modes = {TimingMode::kLatency};
  s.profile_layers = true;
  auto report = bench_engine(engine, views_of(synthetic_inputs(engine).value()), s);
  ASSERT_TRUE(report.is_ok());
  EXPECT_TRUE(report->layers.empty());
  EXPECT_FALSE(report->profile_note.empty());
}

TEST(BenchAb, InterleavesBothSidesAndGivesTheRatioWithItsInterval) {
  const Engine a = small_engine(0.1f), b = small_engine(0.2f);
  BenchSettings s = quick();
  s.modes = {TimingMode::kLatency};
  s.iterations = 20;
  auto report = bench_ab(a, b, views_of(synthetic_inputs(a, 0, 8).value()), s);
  ASSERT_TRUE(report.is_ok()) << report.status().to_string();
  ASSERT_EQ(report->runs.size(), 1u);
  const AbRun& run = report->runs[0];
  EXPECT_EQ(run.candidate.samples_ms.size(), 20u);
  EXPECT_EQ(run.baseline.samples_ms.size(), 20u);
  EXPECT_DOUBLE_EQ(run.ratio.estimate, run.candidate.stats.median_ms / run.baseline.stats.median_ms);
  EXPECT_LE(run.ratio.low, run.ratio.estimate);
  EXPECT_GE(run.ratio.high, run.ratio.estimate);
  EXPECT_NE(ab_report_text(*report).find("speed-up"), std::string::npos);
}

TEST(BenchEngine, RefusesMissingInputsAndBadSettings) {
  const Engine engine = small_engine(0.1f);
  auto missing = bench_engine(engine, {}, quick());
  ASSERT_FALSE(missing.is_ok());
  EXPECT_NE(missing.status().message().find("'x'"), std::string::npos) << missing.status().message();
  BenchSettings s = quick();
  s.iterations = 1;
  EXPECT_FALSE(bench_engine(engine, views_of(synthetic_inputs(engine).value()), s).is_ok());
  s = quick();
  s.modes.clear();
  EXPECT_FALSE(bench_engine(engine, views_of(synthetic_inputs(engine).value()), s).is_ok());
}

TEST(BenchInputs, RowsRepeatCyclicallyToTheBatch) {
  HostArray a = HostArray::zeros(DataType::kInt64, {2, 3}).value();
  for (int i = 0; i < 6; ++i) a.data_as<int64_t>()[i] = i;
  auto five = arrays_at_batch({{"ids", a.view()}}, 5);
  ASSERT_TRUE(five.is_ok());
  const HostArray& b = five->at("ids");
  EXPECT_EQ(b.shape(), Dims({5, 3}));
  const std::vector<int64_t> want = {0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5, 0, 1, 2};
  EXPECT_EQ(std::vector<int64_t>(b.data_as<int64_t>(), b.data_as<int64_t>() + 15), want);
  auto one = arrays_at_batch({{"ids", a.view()}}, 1);
  ASSERT_TRUE(one.is_ok());
  EXPECT_EQ(one->at("ids").shape(), Dims({1, 3}));
  HostArray scalar = HostArray::zeros(DataType::kFloat32, Dims{}).value();
  EXPECT_FALSE(arrays_at_batch({{"s", scalar.view()}}, 2).is_ok());
}

TEST(BenchInputs, SyntheticInputsFollowTheProfileAndTheSeed) {
  const Engine engine = small_engine(0.1f);
  auto a = synthetic_inputs(engine), b = synthetic_inputs(engine, 0, 3);
  ASSERT_TRUE(a.is_ok() && b.is_ok());
  EXPECT_EQ(a->at("x").shape(), Dims({8, 64}));  // the profile's opt
  EXPECT_EQ(b->at("x").shape(), Dims({3, 64}));
  EXPECT_EQ(a->at("x").data_as<float>()[0], b->at("x").data_as<float>()[0]);
  for (int64_t i = 0; i < a->at("x").element_count(); ++i) {
    const float v = a->at("x").data_as<float>()[i];
    ASSERT_TRUE(v >= -1.0f && v < 1.0f) << v;
  }
  EXPECT_FALSE(synthetic_inputs(engine, 3).is_ok());
}

}  // namespace
}  // namespace tensoracle
