// SPDX-License-Identifier: Apache-2.0
#include "util/base64.h"

#include <cstdint>
#include <cstring>

namespace blobtable::internal {
namespace {
constexpr char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
}

std::string Base64Encode(std::string_view in) {
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  Base64EncodeTo(in, out);
  return out;
}

void Base64EncodeTo(std::string_view in, std::string& out) {
  const size_t at = out.size();
  out.resize(at + (in.size() + 2) / 3 * 4);
  char* o = out.data() + at;
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    const uint32_t n = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8) | uint8_t(in[i + 2]);
    *o++ = kB64[n >> 18];
    *o++ = kB64[(n >> 12) & 63];
    *o++ = kB64[(n >> 6) & 63];
    *o++ = kB64[n & 63];
  }
  if (i + 1 == in.size()) {
    const uint32_t n = uint8_t(in[i]) << 16;
    *o++ = kB64[n >> 18];
    *o++ = kB64[(n >> 12) & 63];
    *o++ = '=';
    *o++ = '=';
  } else if (i + 2 == in.size()) {
    const uint32_t n = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8);
    *o++ = kB64[n >> 18];
    *o++ = kB64[(n >> 12) & 63];
    *o++ = kB64[(n >> 6) & 63];
    *o++ = '=';
  }
}

Result<std::string> Base64Decode(std::string_view in) {
  auto value = [](char c) -> int {
    const char* p = c ? strchr(kB64, c) : nullptr;
    return p ? static_cast<int>(p - kB64) : -1;
  };
  if (in.size() % 4 != 0) return Status::InvalidArgument("base64 length is not a multiple of 4");
  std::string out;
  for (size_t i = 0; i < in.size(); i += 4) {
    int v[4];
    int pad = 0;
    for (int k = 0; k < 4; ++k) {
      char c = in[i + k];
      if (c == '=' && i + 4 == in.size() && k >= 2) {
        v[k] = 0;
        ++pad;
        continue;
      }
      if (pad > 0 || (v[k] = value(c)) < 0) return Status::InvalidArgument("invalid base64");
    }
    uint32_t n = (v[0] << 18) | (v[1] << 12) | (v[2] << 6) | v[3];
    out.push_back(static_cast<char>(n >> 16));
    if (pad < 2) out.push_back(static_cast<char>((n >> 8) & 0xFF));
    if (pad < 1) out.push_back(static_cast<char>(n & 0xFF));
    if ((pad == 1 && (n & 0xFF)) || (pad == 2 && (n & 0xFFFF)))
      return Status::InvalidArgument("non-canonical base64 padding");
  }
  return out;
}

}  // namespace blobtable::internal
