// SPDX-License-Identifier: Apache-2.0
// List Blobs answers (storage/azure/azure_parsing.h): any bytes give a page or
// Corruption, never a crash or an exception; no name before startFrom, and
// never the marker it was given as the next one.
#include <cstdint>
#include <string_view>

#include "storage/azure/azure_parsing.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view xml(reinterpret_cast<const char*>(data), size);
  blobtable::ListOptions o;
  o.marker = "m1";
  o.start_from = "b";
  auto page = blobtable::internal::ParseListBlobs(xml, o);
  if (!page.ok()) {
    FUZZ_CHECK(page.status().code() == blobtable::Code::kCorruption);
    return 0;
  }
  FUZZ_CHECK(page->next_marker != o.marker);
  for (const auto& item : page->items) FUZZ_CHECK(item.name >= o.start_from);
  return 0;
}
