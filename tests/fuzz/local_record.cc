// SPDX-License-Identifier: Apache-2.0
// The local backend's record buckets (storage/local/blob_record.h): any bytes give
// a bucket or Corruption, never a crash; each of its blobs encodes back
// (format 5, under its name's key) to bytes that decode to the same record.
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
  // Each blob as it is rewritten (format 5) decodes to the same record.
  for (const internal::BucketEntry& e : *bucket) {
    auto back = internal::DecodeBucket(internal::EncodeRecord(e), internal::BucketKey(e.name));
    FUZZ_CHECK(back.ok() && back->size() == 1);
    const internal::BucketEntry& b = (*back)[0];
    FUZZ_CHECK(b.name == e.name);
    FUZZ_CHECK(b.record.etag == e.record.etag);
    FUZZ_CHECK(b.record.last_modified_s == e.record.last_modified_s);
    FUZZ_CHECK(b.record.lease.state == e.record.lease.state);
    FUZZ_CHECK(b.record.lease.id == e.record.lease.id);
    FUZZ_CHECK(b.record.lease.expires_ms == e.record.lease.expires_ms);
    FUZZ_CHECK(b.record.data_id == e.record.data_id);
    FUZZ_CHECK(b.record.data_size == e.record.data_size);
    FUZZ_CHECK(b.record.data_md5 == e.record.data_md5);
    FUZZ_CHECK(b.record.metadata == e.record.metadata);
    FUZZ_CHECK(b.record.inline_data == e.record.inline_data);
    // Inline data is always checked by its own CRC once rewritten.
    FUZZ_CHECK(!b.record.inline_data || b.record.data_crc);
  }
  return 0;
}
