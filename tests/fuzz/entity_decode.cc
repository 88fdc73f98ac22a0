// SPDX-License-Identifier: Apache-2.0
// An entity blob's body (model/entity_codec.h): decoding any bytes gives an
// entity or Corruption, never a crash; what decodes encodes back to bytes
// that decode to the same entity.
#include <cstdint>
#include <string_view>

#include "model/entity_codec.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view body(reinterpret_cast<const char*>(data), size);
  auto e = blobtable::internal::DecodeEntity(body, "t/fuzz/e/-p/-r");
  if (!e.ok()) {
    FUZZ_CHECK(e.status().code() == blobtable::Code::kCorruption);
    return 0;
  }
  auto again = blobtable::internal::EncodeEntity(*e);
  FUZZ_CHECK(again.ok());
  auto back = blobtable::internal::DecodeEntity(*again, "t/fuzz/e/-p/-r");
  FUZZ_CHECK(back.ok());
  // Compared as bytes: a NaN property equals no double, itself included.
  auto twice = blobtable::internal::EncodeEntity(*back);
  FUZZ_CHECK(twice.ok() && *twice == *again);
  return 0;
}
