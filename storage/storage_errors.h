// SPDX-License-Identifier: Apache-2.0
// Builders for storage-service failures with Azure's HTTP status and error
// code, so the local backend reports exactly what Azure would.
#ifndef BLOBTABLE_STORAGE_STORAGE_ERRORS_H_
#define BLOBTABLE_STORAGE_STORAGE_ERRORS_H_

#include <string>
#include <string_view>

#include "blobtable/status.h"

namespace blobtable::internal {

// Marks an Unavailable failure as "the request was never sent" (no
// connection could be made): storage saw nothing of it. Transports and the
// fault injector set it; the Azure backend's retry and the cache read it.
inline constexpr char kNotSent[] = "NotSent";

// The Code a caller should act on for an Azure error code and HTTP status.
// Used by every backend so they agree.
Code CodeForStorageError(int http_status, std::string_view storage_code);

// A failure for `storage_code`/`http_status`, with the Code from
// CodeForStorageError and `detail` as the message.
Status StorageError(int http_status, std::string_view storage_code, std::string detail);

}  // namespace blobtable::internal

#endif  // BLOBTABLE_STORAGE_STORAGE_ERRORS_H_
