// SPDX-License-Identifier: Apache-2.0
// blobtable's embedded store as a W1 system: one partition, the value as a
// binary property; LocalDurability kFull, or kRelaxed ("blobtable-relaxed").
#include <map>
#include <mutex>
#include <optional>
#include <vector>

#include "bench/kv_peer.h"
#include "blobtable/store.h"

namespace bench {
namespace {

using namespace blobtable;

class BlobtablePeer final : public KvPeer {
 public:
  explicit BlobtablePeer(LocalDurability durability) : durability_(durability) {}
  Status Open(const std::string& dir, int threads) override {
    StoreOptions o;
    o.local.durability = durability_;
    auto store = Store::Open(dir, o);
    if (!store.ok()) return store.status();
    store_ = std::move(*store);
    auto table = store_->OpenTable("bench");
    if (!table.ok()) return table.status();
    table_.emplace(*table);
    etags_.assign(static_cast<size_t>(threads), {});
    return Status::OK();
  }
  Status Insert(int thread, const std::string& key, const std::string& value) override {
    auto e = table_->Insert(Make(key, value));
    if (!e.ok()) return e.status();
    etags_[thread][key] = e->etag();
    return Status::OK();
  }
  // The entity as a view (Table::GetView), as the peers hand back a pointer
  // or a copy of the value alone; its value is read through the view.
  Status Get(int, const std::string& key, ValueUse use) override {
    uint64_t bytes = 0;
    Status read = table_->GetView("p", key, [&](const EntityView& row) {
      const PropertyView* v = row.Find("v");
      if (v != nullptr)
        bytes = use == ValueUse::kReadAll ? SumOfBytes(v->bytes()) : v->bytes().size();
      return Status::OK();
    });
    if (!read.ok()) return read;
    return bytes > 0 ? Status::OK() : Status::Internal("no value");
  }
  Status Replace(int thread, const std::string& key, const std::string& value) override {
    std::string& etag = etags_[thread][key];
    auto e = table_->Replace(Make(key, value), etag);
    if (!e.ok()) return e.status();
    etag = e->etag();
    return Status::OK();
  }
  // Rows as views (Table::Visit), as the peers hand back a pointer per row;
  // each row's value is read through its view.
  Status Range(int, const std::string& from, int n) override {
    QueryOptions q;
    q.partition_key = "p";
    q.row_key_from = from;
    q.top = n;
    size_t bytes = 0;
    auto page = table_->Visit(q, [&](const EntityView& row) {
      const PropertyView* v = row.Find("v");
      bytes += v != nullptr ? v->bytes().size() : 0;
    });
    if (!page.ok()) return page.status();
    return page->rows == n && bytes > 0 ? Status::OK() : Status::Internal("short range");
  }

 private:
  static Entity Make(const std::string& key, const std::string& value) {
    Entity e("p", key);
    e.Set("v", Binary{value});
    return e;
  }
  LocalDurability durability_;
  std::unique_ptr<Store> store_;
  std::optional<Table> table_;
  std::vector<std::map<std::string, std::string>> etags_;  // per thread: no lock
};

}  // namespace

std::unique_ptr<KvPeer> NewBlobtablePeer(bool relaxed) {
  return std::make_unique<BlobtablePeer>(relaxed ? LocalDurability::kRelaxed
                                                 : LocalDurability::kFull);
}

}  // namespace bench
