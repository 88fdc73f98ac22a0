// SPDX-License-Identifier: Apache-2.0
// Every blob of a listing, page after page.
#ifndef BLOBTABLE_STORAGE_LIST_ALL_H_
#define BLOBTABLE_STORAGE_LIST_ALL_H_

#include "blobtable/blob_store.h"
#include "util/function_ref.h"

namespace blobtable::internal {

// Calls `fn` with each blob `list` names, in name order, page after page
// (each page listed once `fn` has seen the one before). An error of the
// listing, or of `fn` (which ends it), is returned.
inline Status ForEachListed(BlobStore& blobs, ListOptions list,
                            FunctionRef<Status(const BlobItem&)> fn) {
  for (int pages = 0;;) {
    auto page = blobs.List(list);
    if (!page.ok()) return page.status();
    for (const BlobItem& item : page->items)
      if (Status s = fn(item); !s.ok()) return s;
    auto more = NextListPage(list, *page, &pages);
    if (!more.ok()) return more.status();
    if (!*more) return Status::OK();
  }
}

}  // namespace blobtable::internal

#endif  // BLOBTABLE_STORAGE_LIST_ALL_H_
