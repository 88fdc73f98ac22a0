// SPDX-License-Identifier: Apache-2.0
// mp::Walk's msgpack reader (util/msgpack_util.h) against msgpack-cxx's on
// any bytes: what one accepts the other accepts, item for item, and what
// Walk refuses msgpack-cxx refuses too (both limited to Walk's nesting).
#include <cstdint>
#include <string_view>

#include "tests/fuzz/fuzz_check.h"
#include "tests/msgpack_oracle.h"

using namespace blobtable::internal::mp;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto ours = testing::ItemsOf(bytes);
  auto theirs = testing::OracleItems(bytes);
  FUZZ_CHECK(ours.ok() == theirs.has_value());
  if (ours.ok()) FUZZ_CHECK(*ours == *theirs);
  if (!ours.ok()) FUZZ_CHECK(ours.status().IsCorruption());
  return 0;
}
