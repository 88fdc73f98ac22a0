// SPDX-License-Identifier: Apache-2.0
// What a fuzz target asserts: a property that fails aborts, in a fuzz build
// (libFuzzer then saves the input) and in a replay alike.
#ifndef BLOBTABLE_TESTS_FUZZ_FUZZ_CHECK_H_
#define BLOBTABLE_TESTS_FUZZ_FUZZ_CHECK_H_

#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(cond)                                                               \
  do {                                                                                 \
    if (!(cond)) {                                                                     \
      std::fprintf(stderr, "%s:%d: property failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                    \
    }                                                                                  \
  } while (0)

#endif  // BLOBTABLE_TESTS_FUZZ_FUZZ_CHECK_H_
