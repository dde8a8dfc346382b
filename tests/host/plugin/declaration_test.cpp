// Plugin declarations: what a plugin declares, the defaults, the consistency rules, the JSON form.
#include <gtest/gtest.h>

#include <string>

#include "tensoracle/plugin.h"

namespace tensoracle {
namespace {

PluginDeclaration named(const std::string& name) {
  PluginDeclaration declaration;
  declaration.identity = {name, "1.0.0", "test"};
  return declaration;
}

// The message of the validation error, or "" when the declaration is valid.
std::string rejection(const PluginDeclaration& declaration) {
  return validate_plugin_declaration(declaration).message();
}

TEST(PluginDeclaration, InputsAndOutputsDefaultToFp32Linear) {
  PluginDeclaration declaration = named("relu_like");
  declaration.io.inputs.push_back(PluginInput{"x"});
  declaration.io.outputs.push_back(PluginOutput{"y"});
  ASSERT_TRUE(validate_plugin_declaration(declaration).is_ok());
  ASSERT_EQ(declaration.io.inputs[0].allowed.size(), 1u);
  EXPECT_EQ(declaration.io.inputs[0].allowed[0], (TypeFormat{DataType::kFloat32, TensorFormat::kLinear}));
  EXPECT_EQ(declaration.io.outputs[0].type_format, (TypeFormat{DataType::kFloat32, TensorFormat::kLinear}));
  EXPECT_EQ(declaration.io.outputs[0].shape.kind, OutputShapeRule::Kind::kCopyInput);
  EXPECT_EQ(declaration.io.outputs[0].shape.input_index, 0);
}

TEST(PluginDeclaration, TwoFp16Hwc8InputsAndOneFp16Hwc8Output) {
  const TypeFormat half_hwc8{DataType::kFloat16, TensorFormat::kHwc8};
  PluginDeclaration declaration = named("add_hwc8");
  declaration.io.inputs = {PluginInput{"a", {half_hwc8}}, PluginInput{"b", {half_hwc8}}};
  declaration.io.outputs = {PluginOutput{"sum", half_hwc8, OutputShapeRule::copy_input(0)}};
  declaration.bundle.kernels = {"add_hwc8_kernel"};
  declaration.bundle.architectures = {GpuArch{90}};
  EXPECT_EQ(rejection(declaration), "");
  EXPECT_EQ(type_format_name(declaration.io.outputs[0].type_format), "fp16/HWC8");
}

TEST(PluginDeclaration, OutputCopiesTheShapeOfInputOne) {
  PluginDeclaration declaration = named("gather_like");
  declaration.io.inputs = {PluginInput{"table"}, PluginInput{"indices", {{DataType::kInt32, TensorFormat::kLinear}}}};
  declaration.io.outputs = {PluginOutput{"rows", {}, OutputShapeRule::copy_input(1)}};
  EXPECT_EQ(rejection(declaration), "");
  declaration.io.outputs[0].shape = OutputShapeRule::copy_input(2);
  EXPECT_EQ(rejection(declaration),
            "plugin 'test::gather_like 1.0.0': outputs[0] 'rows': copies the shape of input 2, but the plugin has 2 "
            "input(s)");
}

struct Inconsistency {
  const char* what;
  void (*break_it)(PluginDeclaration&);
  const char* message_part;  // the error names the field and the bad value
};

class RejectsInconsistentDeclaration : public ::testing::TestWithParam<Inconsistency> {};

TEST_P(RejectsInconsistentDeclaration, WithAMessageNamingTheProblem) {
  PluginDeclaration declaration = named("p");
  declaration.io.inputs = {PluginInput{"x"}};
  declaration.io.outputs = {PluginOutput{"y"}};
  declaration.bundle.kernels = {"k"};
  declaration.bundle.architectures = {GpuArch{90}};
  ASSERT_EQ(rejection(declaration), "");
  GetParam().break_it(declaration);
  const Status status = validate_plugin_declaration(declaration);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find(GetParam().message_part), std::string::npos) << status.message();
}

INSTANTIATE_TEST_SUITE_P(
    PluginDeclaration, RejectsInconsistentDeclaration,
    ::testing::Values(
        Inconsistency{"no_outputs", [](PluginDeclaration& d) { d.io.outputs.clear(); }, "at least one output"},
        Inconsistency{"empty_name", [](PluginDeclaration& d) { d.identity.name.clear(); }, "plugin name ''"},
        Inconsistency{"bad_name", [](PluginDeclaration& d) { d.identity.name = "a b"; }, "plugin name 'a b'"},
        Inconsistency{"empty_version", [](PluginDeclaration& d) { d.identity.version.clear(); }, "version ''"},
        Inconsistency{"bad_namespace", [](PluginDeclaration& d) { d.identity.plugin_namespace = "x/y"; },
                      "namespace 'x/y'"},
        Inconsistency{"no_allowed", [](PluginDeclaration& d) { d.io.inputs[0].allowed.clear(); },
                      "inputs[0] 'x': no allowed (type, format) combination"},
        Inconsistency{"duplicate_allowed",
                      [](PluginDeclaration& d) { d.io.inputs[0].allowed.push_back(TypeFormat{}); },
                      "inputs[0] 'x': fp32/LINEAR is listed twice"},
        Inconsistency{"fp32_hwc8_input",
                      [](PluginDeclaration& d) { d.io.inputs[0].allowed = {{DataType::kFloat32, TensorFormat::kHwc8}}; },
                      "format HWC8 needs fp16 or bf16, not fp32"},
        Inconsistency{"int8_hwc8_output",
                      [](PluginDeclaration& d) { d.io.outputs[0].type_format = {DataType::kInt8, TensorFormat::kHwc8}; },
                      "outputs[0] 'y': format HWC8 needs fp16 or bf16, not int8"},
        Inconsistency{"duplicate_tensor_name", [](PluginDeclaration& d) { d.io.outputs[0].name = "x"; },
                      "tensor name 'x' is used twice"},
        Inconsistency{"unnamed_output", [](PluginDeclaration& d) { d.io.outputs[0].name.clear(); },
                      "outputs[0]: a tensor name is required"},
        Inconsistency{"copy_missing_input",
                      [](PluginDeclaration& d) { d.io.outputs[0].shape = OutputShapeRule::copy_input(1); },
                      "copies the shape of input 1, but the plugin has 1 input(s)"},
        Inconsistency{"copy_negative_input",
                      [](PluginDeclaration& d) { d.io.outputs[0].shape = OutputShapeRule::copy_input(-1); },
                      "copies the shape of input -1"},
        Inconsistency{"duplicate_kernel", [](PluginDeclaration& d) { d.bundle.kernels.push_back("k"); },
                      "kernel 'k' is listed twice"},
        Inconsistency{"bad_kernel_name", [](PluginDeclaration& d) { d.bundle.kernels = {"9lives"}; },
                      "kernel name '9lives' is not a symbol name"},
        Inconsistency{"duplicate_arch", [](PluginDeclaration& d) { d.bundle.architectures.push_back(GpuArch{90}); },
                      "architecture sm_90 is listed twice"},
        Inconsistency{"kernels_without_archs", [](PluginDeclaration& d) { d.bundle.architectures.clear(); },
                      "kernels are listed but no architectures"},
        Inconsistency{"archs_without_kernels", [](PluginDeclaration& d) { d.bundle.kernels.clear(); },
                      "architectures are listed but no kernels"}),
    [](const ::testing::TestParamInfo<Inconsistency>& info) { return std::string(info.param.what); });

TEST(PluginDeclaration, ComputedOutputShapeNeedsNoInput) {
  PluginDeclaration declaration = named("generator");
  declaration.io.outputs = {PluginOutput{"noise", {}, OutputShapeRule::computed()}};
  EXPECT_EQ(rejection(declaration), "");
}

TEST(GpuArch, ParsesNvccNames) {
  ASSERT_TRUE(parse_gpu_arch("sm_90").is_ok());
  EXPECT_EQ(parse_gpu_arch("sm_90")->sm, 90);
  EXPECT_EQ(parse_gpu_arch("sm_90a")->variant, 'a');
  EXPECT_EQ(parse_gpu_arch("sm_100f")->name(), "sm_100f");
  EXPECT_EQ(parse_gpu_arch("SM_120")->name(), "sm_120");
  for (const char* bad : {"", "sm_", "sm90", "compute_90", "sm_9", "sm_090", "sm_9000", "sm_90b", "sm_x0"}) {
    EXPECT_FALSE(parse_gpu_arch(bad).is_ok()) << bad;
  }
  EXPECT_NE(parse_gpu_arch("compute_90").status().message().find("expected sm_<compute capability>"),
            std::string::npos);
}

TEST(TensorFormat, NamesRoundTrip) {
  for (TensorFormat format : {TensorFormat::kLinear, TensorFormat::kHwc, TensorFormat::kHwc8}) {
    EXPECT_EQ(*parse_tensor_format(tensor_format_name(format)), format);
  }
  EXPECT_EQ(*parse_tensor_format("hwc8"), TensorFormat::kHwc8);
  EXPECT_EQ(parse_tensor_format("NCHW").status().message(), "unknown tensor format 'NCHW': expected LINEAR, HWC or HWC8");
}

TEST(PluginDeclarationJson, ReadsTheDocumentedFormatWithDefaults) {
  auto declaration = plugin_declaration_from_json(R"({
    "name": "add_hwc8", "version": "2.1", "namespace": "demo",
    "inputs": [{"name": "a", "allowed": [{"type": "fp16", "format": "HWC8"}, {"type": "fp32"}]},
               {"name": "b"}],
    "outputs": [{"name": "sum", "type": "fp16", "format": "HWC8", "shape": {"copy_input": 1}},
                {"name": "stats", "shape": "computed"}],
    "kernels": ["add_hwc8"], "architectures": ["sm_80", "sm_90a"]
  })");
  ASSERT_TRUE(declaration.is_ok()) << declaration.status().message();
  EXPECT_EQ(plugin_display_name(declaration->identity), "demo::add_hwc8 2.1");
  ASSERT_EQ(declaration->io.inputs.size(), 2u);
  EXPECT_EQ(type_format_name(declaration->io.inputs[0].allowed[0]), "fp16/HWC8");
  EXPECT_EQ(type_format_name(declaration->io.inputs[0].allowed[1]), "fp32/LINEAR");
  EXPECT_EQ(type_format_name(declaration->io.inputs[1].allowed.at(0)), "fp32/LINEAR");
  EXPECT_EQ(declaration->io.outputs[0].shape.input_index, 1);
  EXPECT_EQ(declaration->io.outputs[1].shape.kind, OutputShapeRule::Kind::kComputed);
  EXPECT_EQ(type_format_name(declaration->io.outputs[1].type_format), "fp32/LINEAR");
  ASSERT_EQ(declaration->bundle.architectures.size(), 2u);
  EXPECT_EQ(declaration->bundle.architectures[1].name(), "sm_90a");
}

TEST(PluginDeclarationJson, RoundTrips) {
  PluginDeclaration declaration = named("round_trip");
  declaration.io.inputs = {PluginInput{"x", {{DataType::kBFloat16, TensorFormat::kHwc}, {}}}};
  declaration.io.outputs = {PluginOutput{"y", {DataType::kBFloat16, TensorFormat::kHwc8}, OutputShapeRule::computed()}};
  declaration.bundle = {{"k1", "_Z2k2Pf"}, {GpuArch{86}, GpuArch{100, 'f'}}};
  auto again = plugin_declaration_from_json(plugin_declaration_to_json(declaration));
  ASSERT_TRUE(again.is_ok()) << again.status().message();
  EXPECT_EQ(plugin_declaration_to_json(*again), plugin_declaration_to_json(declaration));
  EXPECT_EQ(again->io.inputs[0].allowed, declaration.io.inputs[0].allowed);
  EXPECT_EQ(again->bundle.architectures, declaration.bundle.architectures);
}

TEST(PluginDeclarationJson, ErrorsNameTheJsonPath) {
  const auto error = [](const char* json) { return plugin_declaration_from_json(json).status().message(); };
  EXPECT_EQ(error("{"),
            "plugin declaration: invalid JSON: parse error at line 1, column 2: syntax error while parsing object key - "
            "unexpected end of input; expected string literal");
  EXPECT_EQ(error(R"({"version": "1"})"), "plugin declaration: missing field 'name'");
  EXPECT_EQ(error(R"({"name": "p", "version": "1", "archs": []})"), "plugin declaration: unknown key 'archs' (known keys: name, version, namespace, inputs, outputs, kernels, "
            "architectures)");
  EXPECT_EQ(error(R"({"name": "p", "version": "1", "outputs": [{"name": "y", "format": "NCHW"}]})"),
            "plugin declaration: /outputs/0/format: unknown tensor format 'NCHW': expected LINEAR, HWC or HWC8");
  EXPECT_EQ(error(R"({"name": "p", "version": "1", "outputs": [{"name": "y", "shape": {"copy_input": "0"}}]})"),
            "plugin declaration: /outputs/0/shape: expected \"computed\" or {\"copy_input\": <input index>}, got "
            "{\"copy_input\":\"0\"}");
  EXPECT_EQ(error(R"({"name": "p", "version": "1", "outputs": [{"name": "y"}], "kernels": ["k"],
                      "architectures": ["sm90"]})"),
            "plugin declaration: /architectures/0: invalid GPU architecture 'sm90': expected sm_<compute capability>[a|f], e.g. sm_90");
  // A JSON declaration that parses is also validated.
  EXPECT_EQ(error(R"({"name": "p", "version": "1", "outputs": [{"name": "y"}]})"),
            "plugin declaration: plugin 'p 1': outputs[0] 'y': copies the shape of input 0, but the plugin has 0 input(s)");
}

TEST(PluginDeclarationJson, TheExampleDeclarationIsValid) {
  auto declaration = read_plugin_declaration(TENSORACLE_SOURCE_DIR "/examples/bundle_example/plugin.json");
  ASSERT_TRUE(declaration.is_ok()) << declaration.status().message();
  EXPECT_EQ(declaration->bundle.kernels, (std::vector<std::string>{"scale_bias", "gated_residual"}));
  EXPECT_EQ(read_plugin_declaration("/nonexistent/plugin.json").status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace tensoracle
