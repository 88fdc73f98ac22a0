// SPDX-License-Identifier: Apache-2.0
// The local backend's record buckets (storage/local/blob_record.h): any bytes give
// a bucket or Corruption, never a crash; a bucket encodes back to bytes
// that decode to the same names, ETags, data references and inline data.
#include <cstdint>
#include <string_view>

#include "storage/local/blob_record.h"
#include "tests/fuzz/fuzz_check.h"

using namespace blobtable;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view value(reinterpret_cast<const char*>(data), size);
  auto bucket = internal::DecodeBucket(value, "k");
  if (!bucket.ok()) {
    FUZZ_CHECK(bucket.status().IsCorruption());
    return 0;
  }
  auto back = internal::DecodeBucket(internal::EncodeBucket(*bucket), "k");
  FUZZ_CHECK(back.ok() && back->size() == bucket->size());
  for (size_t i = 0; i < back->size(); ++i) {
    FUZZ_CHECK((*back)[i].name == (*bucket)[i].name);
    FUZZ_CHECK((*back)[i].record.etag == (*bucket)[i].record.etag);
    FUZZ_CHECK((*back)[i].record.data_id == (*bucket)[i].record.data_id);
    FUZZ_CHECK((*back)[i].record.metadata == (*bucket)[i].record.metadata);
    FUZZ_CHECK((*back)[i].record.inline_data == (*bucket)[i].record.inline_data);
  }
  return 0;
}
