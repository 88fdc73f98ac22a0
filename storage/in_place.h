// SPDX-License-Identifier: Apache-2.0
// Reading in place: a backend that holds its blobs in this process (the
// local backend) hands a blob, or a listing's blobs, to the caller where
// they lie, so a get or a query decodes each entity once, straight from the
// store's page, with no GetResult or BlobItem (its properties, metadata map
// and a copy of its data) in between (docs/performance.md, "Step 4").
//
// Not part of BlobStore: a store's stack offers it only when its top is
// such a backend itself (Store finds it by dynamic_cast). A wrapper (a
// fault injector, a request counter, a cache) does not, so everything a
// wrapper changes still goes through Get and List.
#ifndef BLOBTABLE_STORAGE_IN_PLACE_H_
#define BLOBTABLE_STORAGE_IN_PLACE_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "blobtable/blob_store.h"
#include "util/function_ref.h"

namespace blobtable::internal {

// A blob where the backend holds it. Every view is valid only during the
// call that receives it.
struct BlobInPlace {
  std::string_view name;
  std::string_view etag;
  // Its metadata as stored (names and values, in name order).
  const std::vector<std::pair<std::string_view, std::string_view>>* metadata = nullptr;
  std::string_view data;  // its body
};

using BlobVisitor = FunctionRef<Status(const BlobInPlace&)>;

// Whether a read in place checks a blob's data against its checksum before
// handing it over. kAsItLies is for a caller that keeps nothing of the data
// past the visit and decodes it with a decoder that refuses what it cannot
// read (Table::Visit and Table::GetView: a value damaged in a way that
// still decodes reaches its visitor; Get, Query and `blobtable check`
// report it).
// The record's own fields (name, ETag, metadata, lease) are checked either
// way.
enum class InPlaceData { kChecked, kAsItLies };

class InPlaceReader {
 public:
  virtual ~InPlaceReader() = default;

  // Get(name) handed over in place: calls `visit` with the blob and returns
  // what it returns. NotFound (404 BlobNotFound) if there is no such blob,
  // without calling it; other errors as Get's. `data_check`: see
  // InPlaceData. Thread-safe as Get is.
  virtual Status ReadInPlace(std::string_view name, InPlaceData data_check, BlobVisitor visit) = 0;

  // The page List(options) would return with include_data, handed over
  // blob by blob (each with its body, read in the listing's snapshot):
  // calls `visit` with each of the page's blobs in name order, and returns
  // the page's next_marker (empty when the listing is complete). A `visit`
  // that returns an error ends the listing with it. Errors as List's; then
  // `visit` may have seen some of the page. `data_check`: see InPlaceData.
  // Thread-safe as List is.
  virtual Result<std::string> ListInPlace(const ListOptions& options, InPlaceData data_check,
                                          BlobVisitor visit) = 0;
};

}  // namespace blobtable::internal

#endif  // BLOBTABLE_STORAGE_IN_PLACE_H_
