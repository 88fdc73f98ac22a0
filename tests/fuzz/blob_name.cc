// SPDX-License-Identifier: Apache-2.0
// Keys to blob names (model/blob_naming.h), from two keys cut out of the
// input: a name decodes back to its keys, stays inside its table's and
// partition's prefix, orders as its keys do, and carries nothing a service
// would normalise; an escaped key is decoded only if it is exactly what
// the encoder makes.
#include <cstdint>
#include <string>

#include "blobtable/entity.h"
#include "model/blob_naming.h"
#include "tests/fuzz/fuzz_check.h"

using namespace blobtable;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  // Any text as an escaped key: accepted only if the encoder makes it.
  if (auto decoded = internal::naming::DecodeKey(input); decoded.ok())
    FUZZ_CHECK(internal::naming::EncodeKey(*decoded) == input);
  const size_t cut = size == 0 ? 0 : data[0] % (size + 1);
  const std::string pk = input.substr(0, cut), rk = input.substr(cut);
  const std::string epk = internal::naming::EncodeKey(pk), erk = internal::naming::EncodeKey(rk);
  for (const std::string* e : {&epk, &erk})
    FUZZ_CHECK(e->find_first_of("/.% ") == std::string::npos);
  FUZZ_CHECK((pk < rk) == (epk < erk) && (pk == rk) == (epk == erk));
  if (!ValidateKey(pk, "PartitionKey").ok() || !ValidateKey(rk, "RowKey").ok()) return 0;
  auto name = internal::naming::EntityBlobName("orders", pk, rk);
  if (!name.ok()) return 0;  // too long for a blob name: refused, not cut
  FUZZ_CHECK(name->rfind(internal::naming::PartitionPrefix("orders", pk), 0) == 0);
  auto keys = internal::naming::ParseEntityBlobName("orders", *name);
  FUZZ_CHECK(keys.ok() && keys->partition_key == pk && keys->row_key == rk);
  FUZZ_CHECK(internal::naming::IsEntityBlobName(*name));
  return 0;
}
