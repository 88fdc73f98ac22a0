// SPDX-License-Identifier: Apache-2.0
// The headers most test sources parse, precompiled once a build and
// included before every test source (tests/CMakeLists.txt): a test source
// then compiles in about half the CPU (tests/txn_test.cc 4.1 -> 2.0 s,
// GCC -O0), and CI's budget is CPU (docs/testing.md#tests). Only headers
// that no compile definition of a test target changes: the standard
// library, GoogleTest and the public API. Test sources still
// include what they use; only the library's build checks that each source
// compiles alone. A header few of them use stays out: loading the larger
// file costs every source more than parsing it costs those few.
#ifndef BLOBTABLE_TESTS_TEST_PCH_H_
#define BLOBTABLE_TESTS_TEST_PCH_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "blobtable/store.h"
#include "blobtable/table.h"
#include "blobtable/txn.h"

#endif  // BLOBTABLE_TESTS_TEST_PCH_H_
