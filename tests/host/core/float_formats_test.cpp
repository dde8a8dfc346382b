// Exhaustive checks of the narrow float formats: every code decodes to the value its bit fields
// define (computed independently here with ldexp), every finite value re-encodes to its own code,
// every midpoint between neighbours rounds to the even one, and overflow follows the documented
// rules (float_formats.h).
#include "tensoracle/float_formats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <vector>

namespace tensoracle {
namespace {

struct Format {
  const char* name;
  int exponent_bits;
  int mantissa_bits;
  bool has_infinity;  // false: e4m3, whose all-ones magnitude is NaN and nothing is inf
  std::function<float(uint32_t)> decode;
  std::function<uint32_t(float)> encode;
  std::function<uint32_t(float)> encode_saturating;  // empty: format has no saturating mode
};

std::vector<Format> formats() {
  return {
      {"fp16", 5, 10, true, [](uint32_t c) { return fp16_to_float(static_cast<uint16_t>(c)); },
       [](float f) { return float_to_fp16(f); }, nullptr},
      {"bf16", 8, 7, true, [](uint32_t c) { return bf16_to_float(static_cast<uint16_t>(c)); },
       [](float f) { return float_to_bf16(f); }, nullptr},
      {"fp8e4m3", 4, 3, false, [](uint32_t c) { return fp8e4m3_to_float(static_cast<uint8_t>(c)); },
       [](float f) { return float_to_fp8e4m3(f); },
       [](float f) { return float_to_fp8e4m3(f, Fp8Overflow::kSaturate); }},
      {"fp8e5m2", 5, 2, true, [](uint32_t c) { return fp8e5m2_to_float(static_cast<uint8_t>(c)); },
       [](float f) { return float_to_fp8e5m2(f); },
       [](float f) { return float_to_fp8e5m2(f, Fp8Overflow::kSaturate); }},
  };
}

int total_bits(const Format& f) { return 1 + f.exponent_bits + f.mantissa_bits; }

// The value a code means, from its bit fields alone. NaN for NaN codes.
double reference_value(const Format& f, uint32_t code) {
  const int bias = (1 << (f.exponent_bits - 1)) - 1;
  const uint32_t sign = code >> (f.exponent_bits + f.mantissa_bits);
  const uint32_t exponent = (code >> f.mantissa_bits) & ((1u << f.exponent_bits) - 1);
  const uint32_t mantissa = code & ((1u << f.mantissa_bits) - 1);
  const uint32_t max_exponent = (1u << f.exponent_bits) - 1;
  double magnitude;
  if (f.has_infinity && exponent == max_exponent) {
    magnitude = mantissa == 0 ? std::numeric_limits<double>::infinity() : std::nan("");
  } else if (!f.has_infinity && exponent == max_exponent && mantissa == (1u << f.mantissa_bits) - 1) {
    magnitude = std::nan("");
  } else if (exponent == 0) {
    magnitude = std::ldexp(static_cast<double>(mantissa), 1 - bias - f.mantissa_bits);
  } else {
    magnitude = std::ldexp(1.0 + std::ldexp(static_cast<double>(mantissa), -f.mantissa_bits),
                           static_cast<int>(exponent) - bias);
  }
  return sign ? -magnitude : magnitude;
}

// Positive finite codes in increasing order of value.
std::vector<uint32_t> positive_finite_codes(const Format& f) {
  std::vector<uint32_t> codes;
  const uint32_t sign_bit = 1u << (total_bits(f) - 1);
  for (uint32_t c = 0; c < sign_bit; ++c)
    if (std::isfinite(reference_value(f, c))) codes.push_back(c);
  return codes;
}

void PrintTo(const Format& f, std::ostream* os) { *os << f.name; }

class FloatFormatTest : public testing::TestWithParam<Format> {};

TEST_P(FloatFormatTest, EveryCodeDecodesToItsBitFieldValue) {
  const Format& f = GetParam();
  for (uint32_t code = 0; code < (1u << total_bits(f)); ++code) {
    const double expected = reference_value(f, code);
    const float actual = f.decode(code);
    if (std::isnan(expected)) {
      EXPECT_TRUE(std::isnan(actual)) << f.name << " code " << code;
    } else {
      EXPECT_EQ(static_cast<double>(actual), expected) << f.name << " code " << code;
      EXPECT_EQ(std::signbit(actual), std::signbit(expected)) << f.name << " code " << code;
    }
  }
}

TEST_P(FloatFormatTest, EveryValueReencodesToItsOwnCodeAndNanStaysNan) {
  const Format& f = GetParam();
  for (uint32_t code = 0; code < (1u << total_bits(f)); ++code) {
    const float value = f.decode(code);
    if (std::isnan(value)) {
      EXPECT_TRUE(std::isnan(f.decode(f.encode(value)))) << f.name << " code " << code;
      const uint32_t sign_bit = 1u << (total_bits(f) - 1);
      EXPECT_EQ(f.encode(value) & sign_bit, code & sign_bit) << f.name << " NaN keeps its sign";
    } else {
      EXPECT_EQ(f.encode(value), code) << f.name << " value " << value;
    }
  }
}

TEST_P(FloatFormatTest, MidpointsRoundToEvenAndNeighboursRoundToNearest) {
  const Format& f = GetParam();
  const auto codes = positive_finite_codes(f);
  for (size_t i = 0; i + 1 < codes.size(); ++i) {
    const double low = reference_value(f, codes[i]);
    const double high = reference_value(f, codes[i + 1]);
    const float midpoint = static_cast<float>((low + high) / 2);  // exact: fp32 is wider
    ASSERT_EQ(static_cast<double>(midpoint), (low + high) / 2);
    const uint32_t even = (codes[i] & 1u) == 0 ? codes[i] : codes[i + 1];
    EXPECT_EQ(f.encode(midpoint), even) << f.name << " midpoint " << midpoint;
    EXPECT_EQ(f.encode(-midpoint), even | (1u << (total_bits(f) - 1))) << f.name << " -midpoint";
    EXPECT_EQ(f.encode(std::nextafter(midpoint, 0.0f)), codes[i]) << f.name << " below " << midpoint;
    EXPECT_EQ(f.encode(std::nextafter(midpoint, INFINITY)), codes[i + 1]) << f.name << " above " << midpoint;
  }
}

TEST_P(FloatFormatTest, TinyValuesUnderflowToSignedZero) {
  const Format& f = GetParam();
  const auto codes = positive_finite_codes(f);
  const double smallest = reference_value(f, codes[1]);
  const float half_smallest = static_cast<float>(smallest / 2);
  EXPECT_EQ(f.encode(half_smallest), 0u) << "tie rounds to even zero";
  EXPECT_EQ(f.encode(-half_smallest), 1u << (total_bits(f) - 1)) << "negative zero";
  EXPECT_EQ(f.encode(std::nextafter(half_smallest, 1.0f)), codes[1]);
  EXPECT_EQ(f.encode(std::numeric_limits<float>::denorm_min()), 0u);
}

TEST_P(FloatFormatTest, OverflowFollowsTheDocumentedRule) {
  const Format& f = GetParam();
  const auto codes = positive_finite_codes(f);
  const uint32_t max_code = codes.back();
  const double max_finite = reference_value(f, max_code);
  const double ulp = max_finite - reference_value(f, codes[codes.size() - 2]);
  // The halfway point above max rounds to max when max's code is even (e4m3: 464 -> 448) and
  // overflows when it is odd (fp16: 65520 -> inf).
  const float halfway = static_cast<float>(max_finite + ulp / 2);
  EXPECT_EQ(f.encode(std::nextafter(halfway, 0.0f)), max_code);
  const bool max_is_even = (max_code & 1u) == 0;
  EXPECT_EQ(f.encode(halfway) == max_code, max_is_even) << f.name;
  const float overflowing = max_is_even ? std::nextafter(halfway, INFINITY) : halfway;
  const float inf = std::numeric_limits<float>::infinity();
  if (f.has_infinity) {
    EXPECT_TRUE(std::isinf(f.decode(f.encode(overflowing)))) << f.name;
    EXPECT_TRUE(std::isinf(f.decode(f.encode(inf))));
    EXPECT_LT(f.decode(f.encode(-inf)), 0.0f);
  } else {
    EXPECT_TRUE(std::isnan(f.decode(f.encode(overflowing)))) << f.name << " has no infinity";
    EXPECT_TRUE(std::isnan(f.decode(f.encode(inf))));
  }
  if (f.encode_saturating) {
    EXPECT_EQ(f.encode_saturating(overflowing), max_code);
    EXPECT_EQ(f.encode_saturating(inf), max_code);
    EXPECT_EQ(f.decode(f.encode_saturating(-inf)), static_cast<float>(-max_finite));
    EXPECT_TRUE(std::isnan(f.decode(f.encode_saturating(std::nanf("")))));
  }
}

INSTANTIATE_TEST_SUITE_P(AllNarrowFormats, FloatFormatTest, testing::ValuesIn(formats()),
                         [](const auto& test_info) { return std::string(test_info.param.name); });

TEST(FloatFormats, KnownLandmarks) {
  EXPECT_EQ(float_to_fp16(65504.0f), 0x7BFFu);
  EXPECT_EQ(float_to_fp16(1.0f), 0x3C00u);
  EXPECT_EQ(float_to_bf16(1.0f), 0x3F80u);
  EXPECT_EQ(fp8e4m3_to_float(0x7E), 448.0f);
  EXPECT_EQ(fp8e5m2_to_float(0x7B), 57344.0f);
  EXPECT_EQ(fp8e4m3_to_float(0x01), std::ldexp(1.0f, -9));
  EXPECT_EQ(fp8e5m2_to_float(0x01), std::ldexp(1.0f, -16));
}

TEST(ConvertElements, FloatToIntegerTruncatesAndSaturates) {
  const float src[] = {1.9f, -1.9f, 300.0f, -300.0f, NAN, INFINITY};
  int8_t dst[6];
  convert_elements(DataType::kFloat32, src, DataType::kInt8, dst, 6);
  EXPECT_EQ(dst[0], 1);
  EXPECT_EQ(dst[1], -1);
  EXPECT_EQ(dst[2], 127);
  EXPECT_EQ(dst[3], -128);
  EXPECT_EQ(dst[4], 0);
  EXPECT_EQ(dst[5], 127);
}

TEST(ConvertElements, WideIntegersSurviveWithoutPassingThroughDouble) {
  const int64_t src[] = {(int64_t{1} << 62) + 1, -5};
  int64_t same[2];
  uint8_t narrow[2];
  convert_elements(DataType::kInt64, src, DataType::kUInt64, same, 2);
  EXPECT_EQ(same[0], src[0]);
  EXPECT_EQ(same[1], 0) << "negative saturates to 0 in an unsigned type";
  convert_elements(DataType::kInt64, src, DataType::kUInt8, narrow, 2);
  EXPECT_EQ(narrow[0], 255);
  EXPECT_EQ(narrow[1], 0);
}

TEST(ConvertElements, FloatToHalfRoundsLikeTheScalarFunction) {
  const float src[] = {1.0f / 3.0f, 65520.0f, -0.0f};
  uint16_t dst[3];
  convert_elements(DataType::kFloat32, src, DataType::kFloat16, dst, 3);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(dst[i], float_to_fp16(src[i]));
  float back[3];
  convert_elements(DataType::kFloat16, dst, DataType::kFloat32, back, 3);
  EXPECT_TRUE(std::isinf(back[1]));
  EXPECT_TRUE(std::signbit(back[2]));
}

}  // namespace
}  // namespace tensoracle
