// SPDX-License-Identifier: Apache-2.0
// The list-append workload (after Jepsen's Elle): eight entities in two
// tables and four partitions each hold a list of unique elements (eight new
// ones every few seconds, WorkerContext::key_era_ns, so that no list grows
// long: every read is logged whole);
// transactions read keys and append to them, beside plain appends (a read
// and a conditional replace or merge), plain reads and partition queries.
// Every write kind that can append without losing an element is used: a
// transaction writes with Insert, Replace, Merge, Upsert or UpsertMerge,
// and asserts some of its reads with Check. The checker
// (list_append_check.cc) verifies the history.
#include <algorithm>
#include <set>
#include <sstream>

#include "devtools/stress/list_append.h"

namespace blobtable::stress {
namespace {

const char* const kTables[] = {"lista", "listb"};
const char* const kPartitions[] = {"p0", "p1"};
const char* const kRows[] = {"a", "b"};

// "lista/p0/a" -> its parts.
struct Key {
  std::string table, pk, rk;
};
Key Split(const std::string& key) {
  const size_t a = key.find('/'), b = key.find('/', a + 1);
  return {key.substr(0, a), key.substr(a + 1, b - a - 1), key.substr(b + 1)};
}

std::vector<std::string> ListOf(const Entity& e) {
  std::vector<std::string> out;
  const std::string* v = e.FindAs<std::string>("v");
  if (v == nullptr) return out;
  std::istringstream in(*v);
  for (std::string x; in >> x;) out.push_back(x);
  return out;
}

Entity WithList(const Key& k, const std::vector<std::string>& list) {
  std::string v;
  for (const std::string& x : list) v += (v.empty() ? "" : " ") + x;
  Entity e(k.pk, k.rk);
  e.Set("v", v);
  return e;
}

template <typename T>
const T& Pick(std::mt19937_64& rng, const std::vector<T>& from) {
  return from[rng() % from.size()];
}

class ListAppend final : public Workload {
 public:
  std::string name() const override { return "list-append"; }

  Status Setup(Store&) override { return Status::OK(); }  // every list starts absent (empty)

  void RunOne(WorkerContext& ctx) override {
    const uint64_t dice = ctx.rng() % 100;
    if (dice < 40)
      Transaction(ctx);
    else if (dice < 65)
      PlainAppend(ctx);
    else if (dice < 85)
      PlainRead(ctx);
    else
      Query(ctx);
  }

  std::string Check(const std::vector<Op>& history, Store& store) override {
    std::map<std::string, std::vector<std::string>> final_state;
    std::set<std::string> keys;  // every key the history names, of any era
    for (const Op& op : history)
      for (const MicroOp& m : op.mops) keys.insert(m.key);
    for (const std::string& key : keys) {
      const Key k = Split(key);
      auto table = store.OpenTable(k.table);
      if (!table.ok()) return table.status().ToString();
      auto e = table->Get(k.pk, k.rk, ReadPolicy::Validate());
      if (e.ok())
        final_state[key] = ListOf(*e);
      else if (e.status().IsNotFound())
        final_state[key] = {};
      else
        return "reading the final state of " + key + ": " + e.status().ToString();
    }
    return CheckListAppend(history, final_state);
  }

 private:
  // Lists are new every era (of the machine's monotonic clock, which every
  // worker shares): row "a<era>".
  static std::string Row(const WorkerContext& ctx, const char* row) {
    return row + std::to_string(MonotonicNs() / ctx.key_era_ns);
  }
  // The keys of the present era.
  static std::vector<std::string> AllKeys(const WorkerContext& ctx) {
    std::vector<std::string> keys;
    for (const char* t : kTables)
      for (const char* p : kPartitions)
        for (const char* r : kRows) keys.push_back(std::string(t) + "/" + p + "/" + Row(ctx, r));
    return keys;
  }
  // A new element, unique across workers, restarts and operations.
  static std::string Element(const WorkerContext& ctx, int64_t index, size_t n) {
    return "w" + std::to_string(ctx.worker) + "g" + std::to_string(ctx.gen) + "n" +
           std::to_string(index) + "." + std::to_string(n);
  }

  // Reads and appends, 1-3 keys, in one transaction. Each key is read,
  // appended to, or read then appended to (the read sees the list before
  // the append). A key is read through the transaction, or read plainly and
  // its ETag asserted at commit: by Check for a key only read, by the
  // write's own condition for a key appended to.
  void Transaction(WorkerContext& ctx) {
    std::vector<std::string> keys = AllKeys(ctx);
    std::shuffle(keys.begin(), keys.end(), ctx.rng);
    keys.resize(1 + ctx.rng() % 3);
    std::vector<MicroOp> mops;
    const int64_t index = ctx.history.NextIndex();
    for (size_t n = 0; n < keys.size(); ++n) {
      const int how = static_cast<int>(ctx.rng() % 3);  // 0 read, 1 append, 2 both
      if (how != 1) mops.push_back({"r", keys[n], nullptr});
      if (how != 0) mops.push_back({"a", keys[n], Element(ctx, index, n)});
    }
    ctx.history.Invoke("txn", mops);
    auto finish = [&](const Status& s) {
      if (!s.ok())
        for (MicroOp& m : mops)  // reads of an uncommitted transaction prove nothing
          if (m.kind == "r") m.value = nullptr;
      ctx.history.Complete(index, "txn", OutcomeOf(s), mops, s.ok() ? "" : s.ToString());
    };
    auto txn = ctx.store.Begin(ctx.txn);
    if (!txn.ok()) return finish(txn.status());
    for (size_t i = 0; i < mops.size(); ++i) {
      MicroOp& m = mops[i];
      const bool appended_next = i + 1 < mops.size() && mops[i + 1].key == m.key;
      if (m.kind == "a" && i > 0 && mops[i - 1].key == m.key) continue;  // written with its read
      const Key k = Split(m.key);
      auto table = ctx.store.OpenTable(k.table);
      const bool in_txn = ctx.rng() % 2 == 0;
      auto current = in_txn ? txn->Get(*table, k.pk, k.rk) : table->Get(k.pk, k.rk);
      if (!current.ok() && !current.status().IsNotFound()) return finish(current.status());
      std::vector<std::string> list = current.ok() ? ListOf(*current) : std::vector<std::string>{};
      const std::string etag = current.ok() ? current->etag() : "";
      Status s;
      if (m.kind == "r") m.value = list;
      if (m.kind == "r" && !appended_next) {
        if (!in_txn) s = txn->Check(*table, k.pk, k.rk, etag);
      } else {
        list.push_back((appended_next ? mops[i + 1] : m).value.get<std::string>());
        s = BufferAppend(*txn, *table, WithList(k, list), etag, in_txn, ctx.rng);
      }
      if (!s.ok()) return finish(s);
    }
    finish(txn->Commit().status());
  }

  // Buffers a key's new list so that it commits only over the version read
  // (etag, "" for absent): Replace or Merge with that ETag, Insert; and when
  // the transaction itself read it (and so validates that read at commit),
  // Upsert or UpsertMerge too.
  static Status BufferAppend(blobtable::Transaction& txn, const Table& table, const Entity& e,
                             const std::string& etag, bool read_in_txn, std::mt19937_64& rng) {
    const uint64_t how = rng() % (read_in_txn ? 4 : 2);
    if (how == 2) return txn.Upsert(table, e);
    if (how == 3) return txn.UpsertMerge(table, e);
    if (etag.empty()) return txn.Insert(table, e);
    return how == 0 ? txn.Replace(table, e, etag) : txn.Merge(table, e, etag);
  }

  // A read, then a replace or merge (an insert if absent) conditional on
  // what was read; a lost race is tried again.
  void PlainAppend(WorkerContext& ctx) {
    const std::string key = Pick(ctx.rng, AllKeys(ctx));
    const Key k = Split(key);
    const int64_t index = ctx.history.NextIndex();
    std::vector<MicroOp> mops = {{"a", key, Element(ctx, index, 0)}};
    ctx.history.Invoke("append", mops);
    auto table = ctx.store.OpenTable(k.table);
    Status last;
    for (int attempt = 0; attempt < 8; ++attempt) {
      auto current = table->Get(k.pk, k.rk);
      if (!current.ok() && !current.status().IsNotFound()) {
        last = current.status();
        break;
      }
      std::vector<std::string> list = current.ok() ? ListOf(*current) : std::vector<std::string>{};
      list.push_back(mops[0].value.get<std::string>());
      const Entity next = WithList(k, list);
      auto put = !current.ok()        ? table->Insert(next)
                 : ctx.rng() % 2 == 0 ? table->Replace(next, current->etag())
                                      : table->Merge(next, current->etag());
      last = put.status();
      if (!last.IsConflict()) break;  // a conflict wrote nothing: try again
    }
    ctx.history.Complete(index, "append", OutcomeOf(last), mops, last.ok() ? "" : last.ToString());
  }

  void PlainRead(WorkerContext& ctx) {
    const std::string key = Pick(ctx.rng, AllKeys(ctx));
    const Key k = Split(key);
    std::vector<MicroOp> mops = {{"r", key, nullptr}};
    const int64_t index = ctx.history.Invoke("read", mops);
    auto e = ctx.store.OpenTable(k.table)->Get(k.pk, k.rk);
    if (!e.ok() && !e.status().IsNotFound()) {
      ctx.history.Complete(index, "read", OpType::kFail, mops, e.status().ToString());
      return;
    }
    mops[0].value = e.ok() ? ListOf(*e) : std::vector<std::string>{};
    ctx.history.Complete(index, "read", OpType::kOk, mops);
  }

  // A partition's rows: each row read on its own (queries are not isolated
  // across entities), an absent row an empty list.
  void Query(WorkerContext& ctx) {
    const std::string table_name = kTables[ctx.rng() % 2], pk = kPartitions[ctx.rng() % 2];
    std::vector<MicroOp> mops;
    for (const char* rk : kRows)
      mops.push_back({"r", table_name + "/" + pk + "/" + Row(ctx, rk), nullptr});
    const int64_t index = ctx.history.Invoke("query", mops);
    QueryOptions q;
    q.partition_key = pk;
    auto page = ctx.store.OpenTable(table_name)->Query(q);
    if (!page.ok()) {
      ctx.history.Complete(index, "query", OpType::kFail, mops, page.status().ToString());
      return;
    }
    for (MicroOp& m : mops) m.value = std::vector<std::string>{};
    for (const Entity& e : page->entities)
      for (MicroOp& m : mops)
        if (Split(m.key).rk == e.row_key()) m.value = ListOf(e);
    ctx.history.Complete(index, "query", OpType::kOk, mops);
  }
};

}  // namespace

std::unique_ptr<Workload> MakeListAppendWorkload() { return std::make_unique<ListAppend>(); }

}  // namespace blobtable::stress
