// SPDX-License-Identifier: Apache-2.0
// ASCII helpers for names that are ASCII by rule (header and table names).
#ifndef BLOBTABLE_UTIL_ASCII_H_
#define BLOBTABLE_UTIL_ASCII_H_

#include <string>
#include <string_view>

namespace blobtable::internal {

// Appends `s` to `out`, ASCII letters lowered.
inline char AsciiLower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

inline void AppendAsciiLower(std::string& out, std::string_view s) {
  for (char c : s) out.push_back(AsciiLower(c));
}

inline std::string AsciiLower(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  AppendAsciiLower(out, s);
  return out;
}

}  // namespace blobtable::internal

#endif  // BLOBTABLE_UTIL_ASCII_H_
