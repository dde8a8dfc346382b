#include "tensoracle/status.h"

#include <gtest/gtest.h>

namespace tensoracle {
namespace {

Result<int> half_of(int x) {
  if (x % 2 != 0) return Result<int>(StatusCode::kInvalidArgument, "odd value " + std::to_string(x));
  return x / 2;
}

Result<int> quarter_of(int x) {
  TO_ASSIGN_OR_RETURN(int half, half_of(x));
  return half_of(half);
}

Status check_positive(int x) {
  TO_ASSERT(x > 0);
  return Status::ok();
}

TEST(Status, OkByDefaultAndNamesItsCode) {
  EXPECT_TRUE(Status().is_ok());
  EXPECT_EQ(Status().to_string(), "ok");
  const Status bad(StatusCode::kNotFound, "tensor 'w' not in file");
  EXPECT_FALSE(bad.is_ok());
  EXPECT_EQ(bad.to_string(), "not_found: tensor 'w' not in file");
  EXPECT_EQ(bad.with_context("reading 'a.safetensors'").message(), "reading 'a.safetensors': tensor 'w' not in file");
}

TEST(Result, PropagatesTheFirstError) {
  EXPECT_EQ(*quarter_of(8), 2);
  const auto r = quarter_of(6);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().message(), "odd value 3");
}

TEST(Assert, ReportsFileAndLineInsteadOfAborting) {
  const Status s = check_positive(-1);
  EXPECT_EQ(s.code(), StatusCode::kInternal);
  EXPECT_NE(s.message().find("status_test.cpp:"), std::string::npos);
  EXPECT_NE(s.message().find("x > 0"), std::string::npos);
}

}  // namespace
}  // namespace tensoracle
