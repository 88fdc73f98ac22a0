// SPDX-License-Identifier: Apache-2.0
// Connection strings (storage/azure/azure_config.h): any text gives a
// configuration or InvalidArgument, never a crash; no message repeats a key
// or signature it was given.
#include <cstdint>
#include <string>

#include "storage/azure/azure_config.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

// Where the value after `key=` (up to the next ';') starts, if it looks like
// key or signature material (16 or more characters, a digit and one of
// "+/=" among them); npos if not. Its length goes to *size.
size_t SecretAt(const std::string& text, const std::string& key, size_t* size) {
  size_t at = text.find(key + "=");
  if (at == std::string::npos) return at;
  at += key.size() + 1;
  const std::string value = text.substr(at, text.find(';', at) - at);
  const bool digit = value.find_first_of("0123456789") != std::string::npos;
  const bool sign = value.find_first_of("+/=") != std::string::npos;
  *size = value.size();
  return value.size() >= 16 && digit && sign ? at : std::string::npos;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto config = blobtable::internal::ParseConnectionString(text);
  if (config.ok()) return 0;
  FUZZ_CHECK(config.status().code() == blobtable::Code::kInvalidArgument);
  const std::string message = config.status().ToString();
  for (const char* key : {"AccountKey", "SharedAccessSignature"}) {
    size_t length = 0;
    const size_t at = SecretAt(text, key, &length);
    if (at == std::string::npos) continue;
    const std::string secret = text.substr(at, length);
    if (message.find(secret) == std::string::npos) continue;
    // The message holds the value's text. An echo goes when the value is
    // masked; the message's own words stay (the fuzzer has made
    // "signatures" of the words of the message that refused them).
    std::string masked = text;
    masked.replace(at, length, std::string(length, 'x'));
    auto again = blobtable::internal::ParseConnectionString(masked);
    FUZZ_CHECK(!again.ok() && again.status().ToString().find(secret) != std::string::npos);
  }
  return 0;
}
