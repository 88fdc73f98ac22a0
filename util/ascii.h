// SPDX-License-Identifier: Apache-2.0
// ASCII helpers for names that are ASCII by rule (header and table names).
#ifndef BLOBTABLE_UTIL_ASCII_H_
#define BLOBTABLE_UTIL_ASCII_H_

#include <string>
#include <string_view>

namespace blobtable::internal {

// `c`, or `s` whole, with ASCII letters lowered.
inline char AsciiLower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

inline std::string AsciiLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = AsciiLower(c);
  return out;
}

}  // namespace blobtable::internal

#endif  // BLOBTABLE_UTIL_ASCII_H_
