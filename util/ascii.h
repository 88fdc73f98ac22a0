// ASCII helpers for names that are ASCII by rule (header and table names).
#ifndef BLOBTABLE_UTIL_ASCII_H_
#define BLOBTABLE_UTIL_ASCII_H_

#include <string>
#include <string_view>

namespace blobtable {

inline std::string AsciiLower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

}  // namespace blobtable

#endif  // BLOBTABLE_UTIL_ASCII_H_
