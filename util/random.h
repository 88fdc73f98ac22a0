// SPDX-License-Identifier: Apache-2.0
// Random identifiers (lease ids, transaction ids, write ids).
#ifndef BLOBTABLE_UTIL_RANDOM_H_
#define BLOBTABLE_UTIL_RANDOM_H_

#include <cstdint>
#include <string>

namespace blobtable::internal {

// A random (version 4) GUID in lowercase canonical form,
// "xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx". Thread-safe; fork-safe (reseeds in
// a child process).
std::string NewGuid();

// 64 random bits from the same generator.
uint64_t RandomU64();

// A deterministic mix of `x` (SplitMix64's finaliser): the same input, the
// same 64 bits, well spread. For seeded decisions that must replay.
inline uint64_t Mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace blobtable::internal

#endif  // BLOBTABLE_UTIL_RANDOM_H_
