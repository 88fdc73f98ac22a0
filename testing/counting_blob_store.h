// SPDX-License-Identifier: Apache-2.0
// The one counting wrapper: counts requests by kind, to assert round trips
// (docs/transactions.md#cost). Stacks anywhere a BlobStoreWrapper does.
// Thread-safe.
#ifndef BLOBTABLE_TESTING_COUNTING_BLOB_STORE_H_
#define BLOBTABLE_TESTING_COUNTING_BLOB_STORE_H_

#include <atomic>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "blobtable/blob_store.h"

namespace blobtable::internal {

class CountingBlobStore final : public BlobStoreWrapper {
 public:
  using BlobStoreWrapper::BlobStoreWrapper;

  // Requests by kind: get, head, put, delete, list, metadata, lease, renew,
  // change, release, break, batch (kinds never sent are absent).
  std::map<std::string, int> Counts() const {
    std::lock_guard<std::mutex> lock(mu_);
    return counts_;
  }
  int Total() const {
    int total = 0;
    for (const auto& [kind, n] : Counts()) total += n;
    return total;
  }
  void Clear() {
    std::lock_guard<std::mutex> lock(mu_);
    counts_.clear();
    got_.clear();
    not_modified_ = 0;
    listed_ = 0;
  }

  // Gets of blobs whose names start with `prefix` are not counted from now
  // on (not even by GetsUnder): e.g. a table's index definitions, which a
  // copy over a second old has read again in the background, beside the
  // write that found it so (docs/indexes.md), as a slow run makes it.
  void LeaveOutGetsUnder(std::string prefix) {
    std::lock_guard<std::mutex> lock(mu_);
    left_out_.push_back(std::move(prefix));
  }
  // Of the gets, how many were of blobs whose names start with `prefix`.
  int GetsUnder(std::string_view prefix) const {
    std::lock_guard<std::mutex> lock(mu_);
    int n = 0;
    for (const std::string& name : got_) n += name.starts_with(prefix);
    return n;
  }
  Result<GetResult> Get(std::string_view n, const ReadOptions& o) override {
    Count("get", n);
    auto r = BlobStoreWrapper::Get(n, o);
    if (r.ok() && r->not_modified) not_modified_ += 1;
    return r;
  }
  // Of the gets, how many were answered 304 (no body).
  int NotModified() const { return not_modified_.load(); }
  Result<GetResult> Head(std::string_view n, const AccessConditions& c) override {
    return Count("head"), BlobStoreWrapper::Head(n, c);
  }
  Result<WriteResult> Put(std::string_view n, std::string_view d, const PutOptions& o) override {
    return Count("put"), BlobStoreWrapper::Put(n, d, o);
  }
  Status Delete(std::string_view n, const WriteOptions& o) override {
    return Count("delete"), BlobStoreWrapper::Delete(n, o);
  }
  Result<ListPage> List(const ListOptions& o) override {
    Count("list");
    auto page = BlobStoreWrapper::List(o);
    if (page.ok()) listed_ += static_cast<int>(page->items.size());
    return page;
  }
  // Blobs the listings returned: the part of a listing's cost that grows
  // with what it lists.
  int Listed() const { return listed_.load(); }
  Result<WriteResult> SetMetadata(std::string_view n, const Metadata& m,
                                  const WriteOptions& o) override {
    return Count("metadata"), BlobStoreWrapper::SetMetadata(n, m, o);
  }
  Result<LeaseResult> AcquireLease(std::string_view n, int d, std::string_view p,
                                   const LeaseOptions& c) override {
    return Count("lease"), BlobStoreWrapper::AcquireLease(n, d, p, c);
  }
  Result<LeaseResult> RenewLease(std::string_view n, std::string_view id,
                                 const LeaseOptions& c) override {
    return Count("renew"), BlobStoreWrapper::RenewLease(n, id, c);
  }
  Result<LeaseResult> ChangeLease(std::string_view n, std::string_view id, std::string_view p,
                                  const LeaseOptions& c) override {
    return Count("change"), BlobStoreWrapper::ChangeLease(n, id, p, c);
  }
  Result<LeaseResult> ReleaseLease(std::string_view n, std::string_view id,
                                   const LeaseOptions& c) override {
    return Count("release"), BlobStoreWrapper::ReleaseLease(n, id, c);
  }
  Result<LeaseResult> BreakLease(std::string_view n, std::optional<int> p,
                                 const LeaseOptions& c) override {
    return Count("break"), BlobStoreWrapper::BreakLease(n, p, c);
  }
  BatchResult CommitBatch(const std::vector<BatchOp>& ops) override {
    return Count("batch"), BlobStoreWrapper::CommitBatch(ops);
  }

 private:
  // `got`: the name of a get, kept for GetsUnder.
  void Count(const char* kind, std::optional<std::string_view> got = std::nullopt) {
    std::lock_guard<std::mutex> lock(mu_);
    if (got)
      for (const std::string& prefix : left_out_)
        if (got->starts_with(prefix)) return;
    ++counts_[kind];
    if (got) got_.emplace_back(*got);
  }
  mutable std::mutex mu_;
  std::atomic<int> not_modified_{0};
  std::atomic<int> listed_{0};
  std::map<std::string, int> counts_;
  std::vector<std::string> got_;  // the names of the gets, in order
  std::vector<std::string> left_out_;
};

}  // namespace blobtable::internal

#endif  // BLOBTABLE_TESTING_COUNTING_BLOB_STORE_H_
