// SPDX-License-Identifier: Apache-2.0
#include "storage/storage_errors.h"

namespace blobtable::internal {

Code CodeForStorageError(int http_status, std::string_view storage_code) {
  switch (http_status) {
    case 400:
    case 401:
    case 403:
    case 405:
    case 411:
    case 413:
    case 416: return Code::kInvalidArgument;
    case 404: return Code::kNotFound;
    case 408:
    case 429:
    case 500:
    case 502:
    case 503:
    case 504: return Code::kUnavailable;
    case 409:
      if (storage_code == "LeaseAlreadyPresent" ||
          storage_code == "LeaseIsBreakingAndCannotBeAcquired")
        return Code::kBusy;
      if (storage_code == "LeaseIdMismatchWithLeaseOperation" ||
          storage_code == "LeaseNotPresentWithLeaseOperation" ||
          storage_code == "LeaseIsBrokenAndCannotBeRenewed" ||
          storage_code == "LeaseIsBreakingAndCannotBeChanged")
        return Code::kLeaseLost;
      return Code::kConflict;  // BlobAlreadyExists and the like
    case 412:
      if (storage_code == "LeaseIdMissing") return Code::kBusy;
      if (storage_code == "LeaseIdMismatchWithBlobOperation" ||
          storage_code == "LeaseNotPresentWithBlobOperation" || storage_code == "LeaseLost")
        return Code::kLeaseLost;
      return Code::kConflict;  // ConditionNotMet
    default: return http_status >= 500 ? Code::kUnavailable : Code::kInternal;
  }
}

Status StorageError(int http_status, std::string_view storage_code, std::string detail) {
  return Status::FromStorage(CodeForStorageError(http_status, storage_code), http_status,
                             std::string(storage_code), std::move(detail));
}

}  // namespace blobtable::internal
