// The BlobStore interface's defaults.
#include "blobtable/blob_store.h"

namespace blobtable {

BatchResult BlobStore::CommitBatch(const std::vector<BatchOp>& ops) {
  BatchResult out;
  out.failed = ops.size();
  out.status = Status::InvalidArgument("the backend at " + Location() +
                                       " cannot apply an atomic batch");
  return out;
}

}  // namespace blobtable
