// Status and Result: what a caller sees of a failure.
#include <gtest/gtest.h>

#include "blobtable/status.h"

namespace blobtable::testing {
namespace {

// Reading the value of a failed Result is a bug: in every build type it
// stops the process with the status's message, never reads garbage.
TEST(ResultDeathTest, ValueOfAnErrorStopsWithItsStatus) {
  Result<int> failed = Status::NotFound("entity (p, r): not found");
  EXPECT_DEATH((void)failed.value(), "Result::value\\(\\) on an error: NotFound: entity \\(p, r\\)");
  EXPECT_DEATH((void)*failed, "on an error");
}

TEST(Result, ValueOfASuccessIsTheValue) {
  Result<int> ok = 7;
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok.value(), 7);
  EXPECT_EQ(*ok, 7);
}

}  // namespace
}  // namespace blobtable::testing
