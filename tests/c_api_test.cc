// SPDX-License-Identifier: Apache-2.0
// The C API's own test program (tests/c/c_api_test.c, written in C) on each
// backend: the embedded store in a fresh directory, and Azurite.
#include <gtest/gtest.h>

#include "tests/azurite.h"
#include "tests/shell.h"
#include "tests/test_util.h"

namespace blobtable::testing {
namespace {

TEST(CApiTest, EveryCaseOnTheEmbeddedStore) {
  TempDir dir;
  ShellRun r = Shell(std::string(BLOBTABLE_C_API_TEST) + " " + Quote(dir.path() + "/store"));
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("checks passed (embedded)"), std::string::npos) << r.out << r.err;
}

TEST(CApiTest, EveryCaseOnAzurite) {
  Azurite* a = Azurite::Get();
  ASSERT_NE(a, nullptr);
  ShellRun r = Shell(std::string(BLOBTABLE_C_API_TEST) + " " + Quote(a->ConnectionString()));
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("checks passed (Azure)"), std::string::npos) << r.out << r.err;
}

}  // namespace
}  // namespace blobtable::testing
