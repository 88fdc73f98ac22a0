// SPDX-License-Identifier: Apache-2.0
// Status and Result: what a caller sees of a failure.
#include <gtest/gtest.h>

#include <memory>

#include "blobtable/retry.h"
#include "blobtable/status.h"

namespace blobtable::testing {
namespace {

// Reading the value of a failed Result is a bug: in every build type it
// stops the process with the status's message, never reads garbage.
TEST(ResultDeathTest, ValueOfAnErrorStopsWithItsStatus) {
  Result<int> failed = Status::NotFound("entity (p, r): not found");
  EXPECT_DEATH((void)failed.value(),
               "Result::value\\(\\) on an error: NotFound: entity \\(p, r\\)");
  EXPECT_DEATH((void)*failed, "on an error");
}

TEST(Result, ValueOfASuccessIsTheValue) {
  Result<int> ok = 7;
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok.value(), 7);
  EXPECT_EQ(*ok, 7);
}

// `*std::move(result)` moves the value out: a move-only value compiles, and
// is the one the result held (a copy would not compile).
TEST(Result, DereferencingAnRvalueMovesTheValueOut) {
  Result<std::unique_ptr<int>> r(std::make_unique<int>(7));
  const int* held = r->get();
  std::unique_ptr<int> out = *std::move(r);
  EXPECT_EQ(out.get(), held);
  EXPECT_EQ(*out, 7);
}

TEST(Result, ValueOrGivesTheFallbackOnAnError) {
  Result<int> ok = 7;
  Result<int> failed = Status::NotFound("gone");
  EXPECT_EQ(ok.value_or(0), 7);
  EXPECT_EQ(failed.value_or(-1), -1);
  Result<std::string> text = Status::Busy("later");
  EXPECT_EQ(text.value_or("fallback"), "fallback");
  EXPECT_EQ(Result<std::string>(std::string("x")).value_or("y"), "x");
}

TEST(Status, IsRetryableSaysWhichCodesACallerMayRetry) {
  for (Code c :
       {Code::kConflict, Code::kBusy, Code::kLockTimeout, Code::kLeaseLost, Code::kUnavailable})
    EXPECT_TRUE(Status::FromStorage(c, 0, "", "m").IsRetryable()) << CodeName(c);
  for (Code c : {Code::kOk, Code::kNotFound, Code::kInvalidArgument, Code::kCorruption,
                 Code::kIOError, Code::kInternal, Code::kOutcomeUnknown})
    EXPECT_FALSE(Status::FromStorage(c, 0, "", "m").IsRetryable()) << CodeName(c);
}

TEST(RetryPolicy, HelpersRetryUnavailableOnlyWhenAsked) {
  RetryPolicy p;
  EXPECT_TRUE(RetriesOn(Status::Conflict("c"), p));
  EXPECT_FALSE(RetriesOn(Status::Unavailable("u"), p));
  EXPECT_FALSE(RetriesOn(Status::OutcomeUnknown("o"), p));
  p.retry_unavailable = true;
  EXPECT_TRUE(RetriesOn(Status::Unavailable("u"), p));
  EXPECT_FALSE(RetriesOn(Status::OutcomeUnknown("o"), p));
}

TEST(RetryPolicy, BadPoliciesAreNamed) {
  EXPECT_TRUE(ValidateRetryPolicy({}).ok());
  EXPECT_TRUE(ValidateRetryPolicy(RetryPolicy::Once()).ok());
  RetryPolicy p;
  p.max_attempts = 0;
  EXPECT_NE(ValidateRetryPolicy(p).message().find("max_attempts"), std::string::npos);
  p = {};
  p.max_delay = std::chrono::milliseconds(1);
  EXPECT_NE(ValidateRetryPolicy(p).message().find("max_delay"), std::string::npos);
  p = {};
  p.initial_delay = std::chrono::milliseconds(-1);
  EXPECT_NE(ValidateRetryPolicy(p).message().find("initial_delay"), std::string::npos);
  p = {};
  p.max_total = std::chrono::milliseconds(-1);
  EXPECT_NE(ValidateRetryPolicy(p).message().find("max_total"), std::string::npos);
}

// OK is a null pointer: a Status is one pointer wide, and an error's
// details survive copies and moves (the moved-from one is OK).
TEST(Status, IsOnePointerWideAndKeepsItsDetailsThroughCopiesAndMoves) {
  static_assert(sizeof(Status) == sizeof(void*));
  EXPECT_TRUE(Status().ok());
  EXPECT_EQ(Status().message(), "");
  EXPECT_EQ(Status().code(), Code::kOk);
  Status s = Status::FromStorage(Code::kConflict, 412, "ConditionNotMet", "no longer matches");
  Status copy = s;
  EXPECT_EQ(copy.ToString(), "Conflict: no longer matches [ConditionNotMet, HTTP 412]");
  Status moved = std::move(copy);
  EXPECT_EQ(moved.ToString(), s.ToString());
  EXPECT_TRUE(copy.ok());  // NOLINT(bugprone-use-after-move): stated behaviour
  copy = moved;
  const Status& same = copy;
  copy = same;  // self-assignment keeps it
  EXPECT_EQ(copy.http_status(), 412);
  EXPECT_EQ(moved.WithContext("table t").message(), "table t: no longer matches");
  EXPECT_EQ(moved.message(), "no longer matches");
  EXPECT_TRUE(Status::OK().WithContext("x").ok());
}

// One predicate per code, each true for its own code only.
TEST(Status, EveryCodeHasItsPredicate) {
  const std::vector<std::pair<Status, bool (Status::*)() const>> all = {
      {Status::NotFound(""), &Status::IsNotFound},
      {Status::Conflict(""), &Status::IsConflict},
      {Status::Busy(""), &Status::IsBusy},
      {Status::LockTimeout(""), &Status::IsLockTimeout},
      {Status::LeaseLost(""), &Status::IsLeaseLost},
      {Status::Unavailable(""), &Status::IsUnavailable},
      {Status::InvalidArgument(""), &Status::IsInvalidArgument},
      {Status::Corruption(""), &Status::IsCorruption},
      {Status::IOError(""), &Status::IsIOError},
      {Status::Internal(""), &Status::IsInternal},
      {Status::OutcomeUnknown(""), &Status::IsOutcomeUnknown}};
  for (size_t i = 0; i < all.size(); ++i)
    for (size_t j = 0; j < all.size(); ++j)
      EXPECT_EQ((all[i].first.*all[j].second)(), i == j) << all[i].first.ToString() << " " << j;
  for (const auto& [s, is] : all) EXPECT_FALSE((Status::OK().*is)());
}

}  // namespace
}  // namespace blobtable::testing
