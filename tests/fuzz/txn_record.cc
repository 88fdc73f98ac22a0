// SPDX-License-Identifier: Apache-2.0
// Transaction records (txn/txn_record.h) and the names made from a
// transaction id found on a lock or an entity (any text: it is read from
// metadata another client could write): a record decodes or is Corruption,
// never a crash, and decodes the same after encoding again; a record's name
// stays under the records' prefix.
#include <cstdint>
#include <string_view>

#include "tests/fuzz/fuzz_check.h"
#include "txn/txn_record.h"
#include "util/stored_format.h"

using namespace blobtable;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  FUZZ_CHECK(internal::RecordBlobName(bytes).rfind(internal::kRecordPrefix, 0) == 0);
  auto rec = internal::DecodeRecord(bytes, "x/fuzz");
  if (!rec.ok()) {
    FUZZ_CHECK(rec.status().IsCorruption());
    return 0;
  }
  const std::string once = internal::EncodeRecord(*rec);
  auto back = internal::DecodeRecord(once, "x/fuzz");
  FUZZ_CHECK(back.ok());
  FUZZ_CHECK(internal::EncodeRecord(*back) == once);
  return 0;
}
