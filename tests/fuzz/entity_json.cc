// SPDX-License-Identifier: Apache-2.0
// The CLI's entity JSON (tools/entity_json.h): any text gives an entity or
// InvalidArgument, never a crash or an exception; an entity read from JSON
// writes back to JSON that reads as the same entity (the same JSON again).
#include <cstdint>
#include <string_view>

#include "tests/fuzz/fuzz_check.h"
#include "tools/entity_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return 0;
  std::string etag;
  auto e = blobtable::cli::EntityFromJson(j, &etag);
  if (!e.ok()) {
    FUZZ_CHECK(e.status().code() == blobtable::Code::kInvalidArgument);
    return 0;
  }
  const nlohmann::ordered_json out = blobtable::cli::EntityToJson(*e);
  auto back = blobtable::cli::EntityFromJson(
      nlohmann::json::parse(out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)),
      &etag);
  FUZZ_CHECK(back.ok());
  // Compared as JSON: a NaN property equals no double, itself included.
  FUZZ_CHECK(blobtable::cli::EntityToJson(*back) == out);
  return 0;
}
