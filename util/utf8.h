// SPDX-License-Identifier: Apache-2.0
// UTF-8 decoding helpers shared by key rules, blob names and JSON.
#ifndef BLOBTABLE_UTIL_UTF8_H_
#define BLOBTABLE_UTIL_UTF8_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace blobtable::internal {

// Decodes the code point at s[*pos] and advances *pos; returns false on
// invalid UTF-8 (overlong forms, surrogates, values past U+10FFFF, truncation).
bool NextCodePoint(std::string_view s, size_t* pos, uint32_t* cp);

// Number of code points, or -1 if `s` is not valid UTF-8.
long Utf8Length(std::string_view s);

// Length in UTF-16 code units (Azure's measure for strings), or -1 if `s` is
// not valid UTF-8.
long Utf16Length(std::string_view s);

// True if `s` is valid UTF-8 (as NextCodePoint judges it).
bool IsValidUtf8(std::string_view s);

// The first `max_bytes` of `s` (whole characters) as a terminal can show
// them, for messages: C0 controls, DEL and bytes that are not UTF-8 as
// \xNN, C1 controls as \u00NN; *cut (may be null) says whether more
// followed.
std::string EscapedForMessage(std::string_view s, size_t max_bytes = SIZE_MAX, bool* cut = nullptr);

}  // namespace blobtable::internal

#endif  // BLOBTABLE_UTIL_UTF8_H_
