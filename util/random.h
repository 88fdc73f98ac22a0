// Random identifiers (lease ids, transaction ids, write ids).
#ifndef BLOBTABLE_UTIL_RANDOM_H_
#define BLOBTABLE_UTIL_RANDOM_H_

#include <cstdint>
#include <string>

namespace blobtable {

// A random (version 4) GUID in lowercase canonical form,
// "xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx". Thread-safe; fork-safe (reseeds in
// a child process).
std::string NewGuid();

// 64 random bits from the same generator.
uint64_t RandomU64();

}  // namespace blobtable

#endif  // BLOBTABLE_UTIL_RANDOM_H_
