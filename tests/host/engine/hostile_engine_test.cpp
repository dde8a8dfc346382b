// Engines whose checksum is valid but whose sections disagree: each is a valid engine
// with one section rewritten and the checksum sealed again (engine_surgery.h), and each must be
// refused by Engine::deserialize with an error naming the section and field, before anything runs.
// Several of these once crashed: an output dtype fp16/int8 where the plan computes fp32 (heap
// buffer overflow in the cpu execution), an input dtype fp16/int8/bool (out-of-bounds read), an
// output renamed or removed or a network without outputs (an uncaught std::out_of_range), a
// convolution padding of 20000 (a 200 GB allocation).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "engine/engine_validation.h"
#include "host/engine/engine_surgery.h"
#include "host/engine/small_cpu_engine.h"
#include "tensoracle/engine.h"

namespace tensoracle {
namespace {

using engine_layout::SectionKind;
using nlohmann::json;
using testing::edit_section;
using testing::edit_section_json;

const std::string& good_engine() {
  static const std::string bytes = testing::small_cpu_engine_bytes();
  return bytes;
}

// The error Engine::deserialize gives for `engine` (which must be refused as corrupt data).
std::string refusal(const std::string& engine) {
  auto opened = Engine::deserialize(engine.data(), engine.size(), "hostile.engine");
  EXPECT_FALSE(opened.is_ok());
  if (opened.is_ok()) return "";
  EXPECT_EQ(opened.status().code(), StatusCode::kCorruptData) << opened.status().message();
  EXPECT_NE(opened.status().message().find("hostile.engine"), std::string::npos) << opened.status().message();
  return opened.status().message();
}

std::string with_io(const std::function<void(json&)>& edit) { return edit_section_json(good_engine(), SectionKind::kIoTable, edit); }
std::string with_plan(const std::function<void(json&)>& edit) { return edit_section_json(good_engine(), SectionKind::kPlan, edit); }

// The plan's network layer named `name`.
json& layer_named(json& plan, const std::string& name) {
  for (json& layer : plan["network"]["layers"])
    if (layer["name"] == name) return layer;
  ADD_FAILURE() << "no layer " << name;
  return plan;
}

TEST(HostileEngine, AnEngineTakenApartAndReassembledUneditedIsValidAndRuns) {
  const std::string resealed = edit_section(good_engine(), SectionKind::kPlan, [](std::string&) {});
  auto engine = Engine::deserialize(resealed.data(), resealed.size(), "resealed.engine");
  ASSERT_TRUE(engine.is_ok()) << engine.status().to_string();
  auto exec = engine->create_execution();
  ASSERT_TRUE(exec.is_ok()) << exec.status().to_string();
  HostArray x = HostArray::zeros(DataType::kFloat32, {2, 3, 8, 8}).value();
  auto outputs = exec->run_on_host({{"x", x.view()}});
  ASSERT_TRUE(outputs.is_ok()) << outputs.status().to_string();
  EXPECT_EQ(outputs->at("y").shape(), Dims({2, 4, 8, 8}));
}

TEST(HostileEngine, AnOutputTypeOtherThanThePlansIsRefused) {
  for (const char* dtype : {"fp16", "int8"}) {
    const std::string message = refusal(with_io([&](json& io) { io["tensors"][1]["dtype"] = dtype; }));
    EXPECT_NE(message.find(fmt::format("output 'y' is {} in the I/O table, fp32 in the plan's network", dtype)),
              std::string::npos)
        << message;
  }
}

TEST(HostileEngine, AnInputTypeOtherThanThePlansIsRefused) {
  for (const char* dtype : {"fp16", "int8", "bool"}) {
    const std::string message = refusal(with_io([&](json& io) { io["tensors"][0]["dtype"] = dtype; }));
    EXPECT_NE(message.find(fmt::format("input 'x' is {} in the I/O table, fp32 in the plan's network", dtype)),
              std::string::npos)
        << message;
  }
}

TEST(HostileEngine, OutputsRenamedRemovedOrAbsentAreRefused) {
  EXPECT_NE(refusal(with_io([](json& io) { io["tensors"][1]["name"] = "z"; }))
                .find("output 0 is 'z' in the I/O table, 'y' in the plan's network"),
            std::string::npos);
  EXPECT_NE(refusal(with_io([](json& io) { io["tensors"].erase(1); }))
                .find("the I/O table has 0 outputs (none), the plan's network 1 ('y')"),
            std::string::npos);
  EXPECT_NE(refusal(with_plan([](json& plan) { plan["network"]["outputs"] = json::array(); }))
                .find("the plan's network has no outputs"),
            std::string::npos);
  EXPECT_NE(refusal(with_io([](json& io) { io["tensors"][0]["name"] = "image"; })).find("input 0 is 'image'"),
            std::string::npos);
}

TEST(HostileEngine, RangesFormatsAndRanksThatContradictThePlanAreRefused) {
  EXPECT_NE(refusal(with_io([](json& io) { io["tensors"][1]["profiles"][0]["max"] = {4, 4, 9, 8}; }))
                .find("profile 0 at its max shapes: output 'y' is [4,4,9,8] in the I/O table, but the plan's network "
                      "computes [4,4,8,8]"),
            std::string::npos);
  EXPECT_NE(refusal(with_io([](json& io) { io["tensors"][0]["format"] = "HWC"; })).find("has format HWC"),
            std::string::npos);
  // The names are the format vocabulary's, exactly (tensor_format.h).
  for (const char* format : {"hwc", "nc32hw"})
    EXPECT_NE(refusal(with_io([&](json& io) { io["tensors"][0]["format"] = format; }))
                  .find(fmt::format("expected LINEAR, HWC or HWC8, got \"{}\"", format)),
              std::string::npos)
        << format;
  EXPECT_NE(refusal(with_io([](json& io) {
              for (const char* point : {"min", "opt", "max"}) io["tensors"][0]["profiles"][0][point] = {1, 3, 8};
            })).find("has rank 3, the plan's network has fp32[-1,3,8,8]"),
            std::string::npos);
  // The network fixes channels to 3; the I/O table may not allow 5.
  EXPECT_NE(refusal(with_io([](json& io) { io["tensors"][0]["profiles"][0]["max"] = {4, 5, 8, 8}; }))
                .find("fixes dimension 1 to 3"),
            std::string::npos);
}

TEST(HostileEngine, AConvolutionPaddingThatWouldNeedTerabytesIsRefusedBeforeAnyAllocation) {
  // The padding alone: the layer's recorded output no longer matches what it computes.
  const std::string inconsistent = refusal(with_plan([](json& plan) {
    layer_named(plan, "conv")["attributes"]["pre_padding"] = {20000, 20000};
    layer_named(plan, "conv")["attributes"]["post_padding"] = {20000, 20000};
  }));
  EXPECT_NE(inconsistent.find("layer 'conv': output 0 recorded as fp32[-1,4,8,8] but inferred as fp32[-1,4,40006,40006]"),
            std::string::npos)
      << inconsistent;
  // ... at the plan's field that records it.
  EXPECT_NE(inconsistent.find(", plan: /network/layers/"), std::string::npos) << inconsistent;
  EXPECT_NE(inconsistent.find("/outputs/0: layer 'conv'"), std::string::npos) << inconsistent;
  // Consistent everywhere (every recorded shape and the I/O table say 40006 x 40006): the
  // activation memory is what refuses it. With 128 output channels the convolution and the relu
  // after it hold [1,128,40006,40006] fp32 each, 1.5 TiB at the smallest input shape, more than
  // any machine has; with 1024 the recorded shapes alone have more elements than any tensor may.
  const auto spatial = [](json& shape) {
    shape[2] = 40006;
    shape[3] = 40006;
  };
  const auto consistent = [&](int64_t channels) {
  const std::string wide = testing::small_cpu_engine_bytes(channels);
  const std::string plan_edited = edit_section_json(wide, SectionKind::kPlan, [&](json& plan) {
    json& conv = layer_named(plan, "conv");
    conv["attributes"]["pre_padding"] = {20000, 20000};
    conv["attributes"]["post_padding"] = {20000, 20000};
    for (json* shape : {&conv["outputs"][0]["shape"], &layer_named(plan, "activation_0")["outputs"][0]["shape"],
                        &plan["network"]["outputs"][0]["shape"], &plan["layers"][0]["outputs"][0]["shape"],
                        &plan["layers"][1]["outputs"][0]["shape"]})
      spatial(*shape);
  });
  return edit_section_json(plan_edited, SectionKind::kIoTable, [&](json& io) {
    for (const char* point : {"min", "opt", "max"}) spatial(io["tensors"][1]["profiles"][0][point]);
  });
  };
  const std::string message = refusal(consistent(128));
  EXPECT_NE(message.find("engine 'hostile.engine': profile 0 needs 1.5 TiB (1638891556864 bytes) of activation memory at "
                         "its smallest input shapes, more than the"),
            std::string::npos)
      << message;
  const std::string elements = refusal(consistent(1024));
  EXPECT_NE(elements.find("engine 'hostile.engine', plan: /network/outputs/0/shape: has more than the limit of "
                          "1099511627776 elements"),
            std::string::npos)
      << elements;
}

TEST(HostileEngine, AttributesAndDimensionsBeyondTheirBoundsAreRefusedNamingTheField) {
  EXPECT_NE(refusal(with_plan([](json& plan) { layer_named(plan, "conv")["attributes"]["pre_padding"] = {1, 1099511627776}; }))
                .find("/network/layers/"),
            std::string::npos);
  const std::string huge = refusal(with_plan([](json& plan) { plan["network"]["inputs"][0]["shape"][2] = 4294967296; }));
  EXPECT_NE(huge.find("engine 'hostile.engine', plan: /network/inputs/0/shape/2: expected an integer in [-1, "
                      "2147483647], got 4294967296"),
            std::string::npos)
      << huge;
  const std::string product = refusal(with_plan([](json& plan) {
    layer_named(plan, "conv")["attributes"]["stride"] = {2147483647, 2147483647, 3};
  }));
  EXPECT_NE(product.find("/attributes/stride: holds integers whose product exceeds 2^62"), std::string::npos) << product;
  const std::string groups = refusal(with_plan([](json& plan) { layer_named(plan, "conv")["attributes"]["groups"] = 0; }));
  EXPECT_NE(groups.find("groups 0 must be >= 1"), std::string::npos) << groups;
  EXPECT_NE(refusal(with_plan([](json& plan) { layer_named(plan, "conv")["attributes"]["stride"] = json::array({json(1)}); }))
                .find("stride"),
            std::string::npos);
}

// Found by tests/fuzz/engine_sections_fuzzer: a resize scale of 5e300 in a plan made shape
// inference convert 8 * 5e300 to int64 (undefined behaviour). It is a definition error now.
TEST(HostileEngine, AResizeScaleThatOverflowsADimensionIsRefused) {
  Network net;
  Tensor x = net.add_input("x", DataType::kFloat32, {1, 1, 8, 8});
  net.mark_output(net.resize(x, ResizeAttributes().set_scales({5e300, 1.0})), "y");
  EXPECT_FALSE(net.status().is_ok());
  EXPECT_NE(net.status().message().find("scale 5e+300 makes dim 0 of"), std::string::npos) << net.status().message();
}

TEST(HostileEngine, BlobsAndConstantsMustAgree) {
  // A constant entry that claims another shape than its blob holds.
  EXPECT_NE(refusal(with_plan([](json& plan) {
              for (auto& [sha, entry] : plan["constants"].items())
                if (entry["shape"].size() == 1) entry["shape"] = {5};
            })).find("needs 20"),
            std::string::npos);
  // A blob no constant uses.
  std::vector<testing::RawSection> sections = testing::split_engine(good_engine());
  sections.push_back({SectionKind::kBlob, "stray", std::string(64, 'x')});
  EXPECT_NE(refusal(testing::assemble_engine(sections)).find("blob 'stray' (64 bytes) is not a constant of the plan's network"),
            std::string::npos);
  // A blob renamed away from its constant.
  sections.pop_back();
  for (auto& s : sections)
    if (s.kind == SectionKind::kBlob) {
      s.name = "const/elsewhere";
      break;
    }
  EXPECT_NE(refusal(testing::assemble_engine(sections)).find("has no blob named"), std::string::npos);
}

TEST(HostileEngine, ANulByteInABlobNameIsRefusedWithTheWholeReasonPrintable) {
  std::vector<testing::RawSection> sections = testing::split_engine(good_engine());
  for (auto& s : sections)
    if (s.kind == SectionKind::kBlob) {
      s.name.insert(2, std::string(1, '\0'));
      break;
    }
  auto file = EngineFile::from_bytes(testing::assemble_engine(sections).data(), testing::assemble_engine(sections).size(),
                                     "nul.engine");
  ASSERT_FALSE(file.is_ok());
  const std::string message = file.status().message();
  EXPECT_EQ(message.find('\0'), std::string::npos);
  EXPECT_NE(message.find("(blob 'co\\x00nst/"), std::string::npos) << message;
  EXPECT_NE(message.find("contains a NUL byte"), std::string::npos) << message;
}

TEST(HostileEngine, APlanOfAnotherBackendOrWithLyingLayersIsRefused) {
  EXPECT_NE(refusal(with_plan([](json& plan) { plan["backend"] = "cuda"; }))
                .find("the plan is for backend 'cuda', the environment says the engine was built by 'cpu'"),
            std::string::npos);
  EXPECT_NE(refusal(with_plan([](json& plan) { plan["layers"][0]["kind"] = "pooling"; }))
                .find("/layers/0/kind: layer 'conv' says 'pooling', the cpu backend runs it as 'convolution'"),
            std::string::npos);
  EXPECT_NE(refusal(with_plan([](json& plan) { plan["layers"].erase(1); })).find("lists 1 layers; the network runs more"),
            std::string::npos);
  EXPECT_NE(refusal(with_plan([](json& plan) { plan["layers"][0]["outputs"][0]["shape"] = {1}; }))
                .find("layer 'conv' records"),
            std::string::npos);
  auto newer = Engine::deserialize(with_plan([](json& plan) { plan["plan_version"] = 99; }).data(),
                                   with_plan([](json& plan) { plan["plan_version"] = 99; }).size(), "newer.engine");
  EXPECT_EQ(newer.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(newer.status().message().find("cpu plan version 99"), std::string::npos) << newer.status().message();
}

TEST(HostileEngine, StrictJsonRulesHoldInEverySection) {
  EXPECT_NE(refusal(edit_section(good_engine(), SectionKind::kPlan,
                                 [](std::string& bytes) { bytes.insert(1, "\"backend\": \"cpu\", "); }))
                .find("duplicate key 'backend'"),
            std::string::npos);
  EXPECT_NE(refusal(edit_section(good_engine(), SectionKind::kIoTable,
                                 [](std::string&bytes) { bytes = std::string(100000, '[') + std::string(100000, ']'); }))
                .find("nesting is deeper than 64 levels"),
            std::string::npos);
}

// A valid engine whose largest profile would need far more memory than any machine has: it loads
// (its smallest shapes fit), and asking for the big shapes is refused before anything is allocated.
TEST(HostileEngine, ShapesWhoseActivationsCannotFitAreRefusedWhenSet) {
  EngineBuild build = testing::small_cpu_build();
  build.inputs.clear();
  build.add_input("x", {ShapeRange{{1, 3, 8, 8}, {1, 3, 8, 8}, {int64_t{1} << 30, 3, 8, 8}}});
  auto bytes = build_serialized_engine(build);
  ASSERT_TRUE(bytes.is_ok()) << bytes.status().to_string();
  auto engine = Engine::deserialize(bytes->data(), bytes->size(), "big.engine");
  ASSERT_TRUE(engine.is_ok()) << engine.status().to_string();
  auto exec = engine->create_execution();
  ASSERT_TRUE(exec.is_ok()) << exec.status().to_string();
  const Status status = exec->set_input_shape("x", {int64_t{1} << 30, 3, 8, 8});
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.message();
  EXPECT_NE(status.message().find("these input shapes need"), std::string::npos) << status.message();
}

TEST(HostileEngine, CheckEngineFileRunsTheBackendsChecksToo) {
  auto good = EngineFile::from_bytes(good_engine().data(), good_engine().size(), "good.engine");
  ASSERT_TRUE(good.is_ok());
  EXPECT_TRUE(check_engine_file(*good).is_ok());
  const std::string lying = with_plan([](json& plan) { plan["layers"][0]["tactic"] = "cpu.fast"; });
  auto file = EngineFile::from_bytes(lying.data(), lying.size(), "lying.engine");
  ASSERT_TRUE(file.is_ok());  // the container is sound
  const Status status = check_engine_file(*file);
  EXPECT_NE(status.message().find("/layers/0/tactic: layer 'conv' says 'cpu.fast', the cpu backend runs it as 'cpu.reference'"),
            std::string::npos)
      << status.message();
}

}  // namespace
}  // namespace tensoracle
