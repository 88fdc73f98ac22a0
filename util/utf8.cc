// SPDX-License-Identifier: Apache-2.0
#include "util/utf8.h"

#include <cstdio>

#include <cstring>

namespace blobtable::internal {

bool NextCodePoint(std::string_view s, size_t* pos, uint32_t* out) {
  size_t i = *pos;
  unsigned char c = static_cast<unsigned char>(s[i]);
  int len;
  uint32_t cp;
  if (c < 0x80) {
    len = 1;
    cp = c;
  } else if ((c & 0xE0) == 0xC0) {
    len = 2;
    cp = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    len = 3;
    cp = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    len = 4;
    cp = c & 0x07;
  } else
    return false;
  if (i + len > s.size()) return false;
  for (int k = 1; k < len; ++k) {
    unsigned char cc = static_cast<unsigned char>(s[i + k]);
    if ((cc & 0xC0) != 0x80) return false;
    cp = (cp << 6) | (cc & 0x3F);
  }
  static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
  *pos = i + len;
  *out = cp;
  return true;
}

namespace {
// Code points, counting those past the BMP `wide` times (2 for UTF-16), or
// -1 on invalid UTF-8.
long Count(std::string_view s, int wide) {
  long count = 0;
  size_t pos = 0;
  uint32_t cp;
  while (pos < s.size()) {
    // 32, then 8 ASCII bytes at once: most text is ASCII, and this runs on
    // every string written and read.
    if (pos + 32 <= s.size()) {
      uint64_t words[4];
      memcpy(words, s.data() + pos, 32);
      if (((words[0] | words[1] | words[2] | words[3]) & 0x8080808080808080ULL) == 0) {
        pos += 32;
        count += 32;
        continue;
      }
    }
    if (pos + 8 <= s.size()) {
      uint64_t word;
      memcpy(&word, s.data() + pos, 8);
      if ((word & 0x8080808080808080ULL) == 0) {
        pos += 8;
        count += 8;
        continue;
      }
    }
    if (static_cast<unsigned char>(s[pos]) < 0x80) {  // the short tail of ASCII text
      ++pos;
      ++count;
      continue;
    }
    if (!NextCodePoint(s, &pos, &cp)) return -1;
    count += cp >= 0x10000 ? wide : 1;
  }
  return count;
}
}  // namespace

long Utf8Length(std::string_view s) { return Count(s, 1); }
long Utf16Length(std::string_view s) { return Count(s, 2); }
bool IsValidUtf8(std::string_view s) {
  // ASCII is valid: the short strings of every read entity (keys, names)
  // are told so by OR-ing their bytes in words (the last word overlapping
  // the one before), without counting.
  const char* p = s.data();
  const size_t n = s.size();
  auto load64 = [](const char* at) {
    uint64_t w;
    std::memcpy(&w, at, 8);
    return w;
  };
  auto load32 = [](const char* at) {
    uint32_t w;
    std::memcpy(&w, at, 4);
    return uint64_t{w};
  };
  uint64_t high = 0;
  if (n >= 8) {
    for (size_t i = 0; i + 8 <= n; i += 8) high |= load64(p + i);
    high |= load64(p + n - 8);
  } else if (n >= 4) {
    high = load32(p) | load32(p + n - 4);
  } else if (n > 0) {  // bytes 0, n/2 and n-1 are every byte of 1 to 3
    high = static_cast<unsigned char>(p[0]) | static_cast<unsigned char>(p[n / 2]) |
           static_cast<unsigned char>(p[n - 1]);
  }
  return (high & 0x8080808080808080ull) == 0 || Count(s, 1) >= 0;
}

std::string EscapedForMessage(std::string_view s, size_t max_bytes, bool* cut) {
  std::string out;
  char buf[12];
  size_t pos = 0;
  uint32_t cp = 0;
  while (pos < s.size() && pos < max_bytes) {
    const size_t start = pos;
    if (!NextCodePoint(s, &pos, &cp)) {  // not UTF-8: the byte, escaped
      pos = start + 1;
      snprintf(buf, sizeof(buf), "\\x%02x", static_cast<unsigned char>(s[start]));
      out += buf;
    } else if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f)) {  // C0, DEL, C1
      snprintf(buf, sizeof(buf), cp < 0x80 ? "\\x%02x" : "\\u%04x", static_cast<unsigned>(cp));
      out += buf;
    } else {
      out.append(s.substr(start, pos - start));
    }
  }
  if (cut != nullptr) *cut = pos < s.size();
  return out;
}

}  // namespace blobtable::internal
