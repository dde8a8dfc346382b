#include "tensoracle/status.h"

#include <gtest/gtest.h>

#include <memory>

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

// The context is built only when the call failed: `contexts` counts how often.
Result<int> eighth_of(int x, int& contexts) {
  TO_ASSIGN_OR_RETURN_CONTEXT(int quarter, quarter_of(x), (++contexts, "eighth of " + std::to_string(x)));
  return half_of(quarter);
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

TEST(Result, AssignOrReturnContextPrefixesOnlyAFailure) {
  int contexts = 0;
  EXPECT_EQ(*eighth_of(16, contexts), 2);
  EXPECT_EQ(contexts, 0);
  const auto r = eighth_of(12, contexts);  // 12 / 4 = 3 is odd: the last half_of fails, unprefixed
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().message(), "odd value 3");
  EXPECT_EQ(contexts, 0);
  const auto q = eighth_of(6, contexts);  // 6 / 2 = 3 is odd inside quarter_of
  ASSERT_FALSE(q.is_ok());
  EXPECT_EQ(q.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(q.status().message(), "eighth of 6: odd value 3");
  EXPECT_EQ(contexts, 1);
}

TEST(Result, MovesItsValueOutOfAnRvalue) {
  Result<std::unique_ptr<int>> made(std::make_unique<int>(7));
  ASSERT_TRUE(made.is_ok());
  const std::unique_ptr<int> taken = *std::move(made);  // compiles only as a move: no copy exists
  EXPECT_EQ(*taken, 7);
}

TEST(Assert, ReportsFileAndLineInsteadOfAborting) {
  const Status s = check_positive(-1);
  EXPECT_EQ(s.code(), StatusCode::kInternal);
  EXPECT_NE(s.message().find("status_test.cpp:"), std::string::npos);
  EXPECT_NE(s.message().find("x > 0"), std::string::npos);
}

}  // namespace
}  // namespace tensoracle
