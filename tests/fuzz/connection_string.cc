// Connection strings (remote/azure_config.h): any text gives a
// configuration or InvalidArgument, never a crash; no message repeats a key
// or signature it was given.
#include <cstdint>
#include <string>

#include "remote/azure_config.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

// The value after `key=` up to the next ';', if it looks like key or
// signature material (16 or more characters, a digit and one of "+/=" among
// them), which no message's own words do: the fuzzer once made a "key" of
// the words of the message that refused it.
std::string SecretAfter(const std::string& text, const std::string& key) {
  size_t at = text.find(key + "=");
  if (at == std::string::npos) return "";
  at += key.size() + 1;
  std::string value = text.substr(at, text.find(';', at) - at);
  const bool digit = value.find_first_of("0123456789") != std::string::npos;
  const bool sign = value.find_first_of("+/=") != std::string::npos;
  return value.size() >= 16 && digit && sign ? value : "";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto config = blobtable::ParseConnectionString(text);
  if (config.ok()) return 0;
  FUZZ_CHECK(config.status().code() == blobtable::Code::kInvalidArgument);
  for (const char* key : {"AccountKey", "SharedAccessSignature"}) {
    const std::string secret = SecretAfter(text, key);
    if (!secret.empty()) FUZZ_CHECK(config.status().ToString().find(secret) == std::string::npos);
  }
  return 0;
}
