// SPDX-License-Identifier: Apache-2.0
// The Azure backend's HTTP retries: which answers are worth another try, and
// the retry policy's defaults. The waits are BackoffDelay's (util/backoff.h).
#ifndef BLOBTABLE_STORAGE_AZURE_RETRY_H_
#define BLOBTABLE_STORAGE_AZURE_RETRY_H_

#include "blobtable/retry.h"

namespace blobtable {

// 408, 429, 500, 502, 503, 504 (Azure's throttling and transient answers).
bool IsRetryableHttpStatus(int http_status);

// The HTTP retries' defaults (and StoreOptions' max_attempts and retry_*):
// 5 attempts, waits from 200 ms doubling to 8 s, 60 s in all.
// (retry_unavailable is not read: the backend always retries no answer.)
RetryPolicy DefaultHttpRetryPolicy();

}  // namespace blobtable

#endif  // BLOBTABLE_STORAGE_AZURE_RETRY_H_
