// SPDX-License-Identifier: Apache-2.0
// The Azure Blob REST backend: every BlobStore call as Blob service requests
// (Azure Storage or Azurite), with Shared Key or SAS authentication, retries
// and a request log. Each call builds its request (storage/azure/requests.h),
// sends it through the retry budget and the pipeline
// (storage/azure/retry.h, pipeline.h) and maps the answer
// (storage/azure/responses.h, write_check.h).
#ifndef BLOBTABLE_STORAGE_AZURE_AZURE_BLOB_STORE_H_
#define BLOBTABLE_STORAGE_AZURE_AZURE_BLOB_STORE_H_

#include <functional>
#include <memory>
#include <string>

#include "blobtable/blob_store.h"
#include "blobtable/storage_options.h"
#include "storage/azure/azure_config.h"
#include "storage/azure/azure_parsing.h"  // FormatHttpDate, ParseHttpDate
#include "storage/azure/http_transport.h"
#include "storage/azure/requests.h"  // kAzureApiVersion
#include "storage/azure/retry.h"
#include "util/metrics.h"

namespace blobtable::internal {

struct AzureStoreOptions {
  AzureConfig config;
  std::string container = "blobtable";
  std::shared_ptr<HttpTransport> transport;  // required
  // The HTTP retries: attempts, backoff, and each operation's time budget
  // (retry_unavailable is not read). The caller sets it; by default
  // AzureOptions::DefaultStorageRetry() (5 attempts, 200 ms to 8 s, 60 s
  // in all; retry_unavailable is not read: no answer is always retried).
  RetryPolicy retry = AzureOptions::DefaultStorageRetry();
  std::chrono::milliseconds request_timeout{30'000};
  std::function<void(const std::string& line)> request_log;  // optional
  // Waits between attempts (SleepFor) and the retry budget's time
  // (Steady); null: Clock::Real(). Not owned. Tests inject a fake clock that
  // their transport moves (a request timing out).
  const Clock* clock = nullptr;
  // Off: a write that finds the container missing fails NotFound instead
  // of creating it (StoreOptions::create_if_missing).
  bool create_container = true;
  // Where the HTTP requests, retries and waits are counted (the store's,
  // Store::Metrics); null: nowhere read.
  std::shared_ptr<MetricsRegistry> metrics;
  // Receives a span for each HTTP attempt (StoreOptions::tracer); null: none.
  std::shared_ptr<Tracer> tracer;
};

// Opens the store without a request: the container is created by the first
// write that finds it missing (a listing of a missing container is empty,
// a read NotFound).
Result<std::shared_ptr<BlobStore>> OpenAzureBlobStore(AzureStoreOptions options);

// The same, without touching the network (tests of the request path).
std::shared_ptr<BlobStore> MakeAzureBlobStore(AzureStoreOptions options);

}  // namespace blobtable::internal

#endif  // BLOBTABLE_STORAGE_AZURE_AZURE_BLOB_STORE_H_
