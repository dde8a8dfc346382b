// Top-k agreement: the fraction of rows whose k largest positions agree.
#include <gtest/gtest.h>

#include <cmath>

#include "tensoracle/compare.h"

namespace tensoracle {
namespace {

HostArray rows(Dims shape, std::vector<float> values) {
  HostArray a = HostArray::zeros(DataType::kFloat32, std::move(shape)).value();
  std::copy(values.begin(), values.end(), a.data_as<float>());
  return a;
}

TEST(TopkAgreement, CountsRowsWhoseTopSetsAgree) {
  // Row 0: same arg-max (2); row 1: arg-max 0 vs 1; the top-2 sets {0, 1} agree in both rows.
  const HostArray c = rows({2, 3}, {0.1f, 0.2f, 0.7f, 0.5f, 0.4f, 0.1f});
  const HostArray r = rows({2, 3}, {0.2f, 0.1f, 0.7f, 0.4f, 0.5f, 0.1f});
  EXPECT_EQ(topk_agreement(c.view(), r.view(), 1).value(), 0.5);
  EXPECT_EQ(topk_agreement(c.view(), r.view(), 2).value(), 0.5);  // row 0: {2, 1} vs {2, 0}
  EXPECT_EQ(topk_agreement(c.view(), r.view(), 3).value(), 1.0);
}

TEST(TopkAgreement, LeadingDimsAreRowsAndTiesGoToTheLowerIndex) {
  const HostArray c = rows({2, 1, 2}, {1.0f, 1.0f, 3.0f, 2.0f});
  const HostArray r = rows({2, 1, 2}, {2.0f, 1.0f, 2.0f, 3.0f});
  EXPECT_EQ(topk_agreement(c.view(), r.view(), 1).value(), 0.5);  // the tie [1, 1] ranks index 0 first
}

TEST(TopkAgreement, NanRanksLowest) {
  const HostArray c = rows({1, 3}, {NAN, 0.5f, 0.1f});
  const HostArray r = rows({1, 3}, {0.0f, 0.5f, 0.1f});
  EXPECT_EQ(topk_agreement(c.view(), r.view(), 1).value(), 1.0);
  EXPECT_EQ(topk_agreement(c.view(), r.view(), 2).value(), 1.0);  // {1, 2} on both sides
}

TEST(TopkAgreement, RefusesWhatHasNoClassAxis) {
  const HostArray a = rows({2, 3}, {1, 2, 3, 4, 5, 6});
  const HostArray b = rows({3, 2}, {1, 2, 3, 4, 5, 6});
  EXPECT_FALSE(topk_agreement(a.view(), b.view(), 1).is_ok());
  EXPECT_FALSE(topk_agreement(a.view(), a.view(), 0).is_ok());
  EXPECT_FALSE(topk_agreement(a.view(), a.view(), 4).is_ok());
  const HostArray scalar = rows({}, {1});
  EXPECT_FALSE(topk_agreement(scalar.view(), scalar.view(), 1).is_ok());
}

}  // namespace
}  // namespace tensoracle
