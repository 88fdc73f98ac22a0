// SPDX-License-Identifier: Apache-2.0
#include "devtools/stress/sim/sim_world.h"

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <set>

#include "model/blob_naming.h"
#include "model/entity_codec.h"
#include "devtools/stress/sim/protocol_monitor.h"
#include "txn/intent.h"
#include "txn/txn_record.h"
#include "util/macros.h"
#include "util/stored_format.h"
#include "testing/hooks.h"

namespace blobtable::sim {

std::string KeyName(int k) { return std::string(kKeys[k][0]) + "/" + kKeys[k][1]; }

Version ValueOf(const Result<Entity>& e) {
  if (!e.ok()) return std::nullopt;
  auto v = e->FindAs<std::string>("v");
  auto m = e->FindAs<std::string>("m");
  return (v ? *v : "(no v)") + (m ? "+" + *m : "");
}

TempDirectory::TempDirectory() {
  std::error_code ec;
  const std::filesystem::path shm = "/dev/shm";
  const std::filesystem::path base =
      std::filesystem::is_directory(shm, ec) && access(shm.c_str(), W_OK) == 0
          ? shm
          : std::filesystem::temp_directory_path();
  std::string tmpl = (base / "blobtable-sim-XXXXXX").string();
  if (mkdtemp(tmpl.data()) != nullptr) path_ = tmpl;
}

TempDirectory::~TempDirectory() {
  std::error_code ec;
  if (!path_.empty()) std::filesystem::remove_all(path_, ec);
}

StoreOptions World::Options(Clock& clock, bool in_place_reads) {
  StoreOptions o;
  o.clock = &clock;
  o = internal::WithAtomicCommits(o, false);  // the lease protocol's interleavings are searched
  {
    // Lock stripes from 0, not from a random one: a seed replays the same.
    internal::TestingHooks hooks = internal::HooksOf(o);
    hooks.first_lock_stripe = 0;
    o.testing = std::make_shared<const internal::TestingHooks>(hooks);
  }
  // Finishing runs in the committing actor (the scheduler runs one request
  // at a time and knows only its own threads).
  o.finish_in_background = false;
  // Resolvers hold a record longer than a coordinator's 15 s leases last:
  // a dead coordinator's locks and entities run out while it is settled.
  o.txn_lease_seconds = 60;
  o.wrap_blob_store = [this, in_place_reads](std::shared_ptr<BlobStore> b) {
    // Reads in place go to the backend (the monitor watches writes only).
    auto* in_place = in_place_reads ? dynamic_cast<internal::InPlaceReader*>(b.get()) : nullptr;
    auto m = std::make_shared<ProtocolMonitor>(std::move(b));
    m->sink = &monitor_;
    return WrapForSimulation(m, sched_, in_place);
  };
  return o;
}

Status World::Open(bool atomic, bool in_place_reads) {
  clock_.set_sleep([this](std::chrono::milliseconds d) { sched_.Sleep(d); });
  StoreOptions o = Options(clock_, in_place_reads);
  auto store = Store::Open(dir_.path(), o);
  if (!store.ok()) return store.status();
  protocol_ = std::move(*store);
  if (!atomic) return Status::OK();
  // The same directory, committing as one LMDB batch: both kinds of commit
  // run on one store at once
  // (docs/transactions.md#on-the-embedded-store-one-lmdb-write-transaction).
  o = internal::WithAtomicCommits(o, true);
  auto batch = Store::Open(dir_.path(), o);
  if (!batch.ok()) return batch.status();
  atomic_ = std::move(*batch);
  return Status::OK();
}

Status World::OpenRecoverer(std::chrono::milliseconds wall_offset) {
  skewed_ = std::make_unique<internal::SkewedClock>(clock_, wall_offset);
  auto store = Store::Open(dir_.path(), Options(*skewed_, /*in_place_reads=*/false));
  if (!store.ok()) return store.status();
  recoverer_ = std::move(*store);
  return Status::OK();
}

Status World::SetInitial(int k, Version v, Store& store, bool via_txn) {
  history_.SetInitial(KeyName(k), v);
  if (!v) return Status::OK();
  auto table = store.OpenTable("sim");
  if (!table.ok()) return table.status();
  Entity e(kKeys[k][0], kKeys[k][1]);
  e.Set("v", *v);
  if (&store != atomic_.get() && !via_txn) return table->Insert(e).status();
  auto txn = store.Begin();
  if (!txn.ok()) return txn.status();
  Status s = txn->Insert(*table, e);
  if (s.ok()) s = txn->Commit().status();
  return s;
}

// P1 (docs/protocol.md): a leased intent exists only beside its
// transaction's record, so Recover, which lists records and not entities,
// leaves none once every coordinator is gone. An intent never leased may
// stay (its coordinator died in its first round, perhaps before its record).
std::string World::LeasedIntentsLeft(BlobStore& blobs) {
  ListOptions entities;
  entities.prefix = internal::kTablePrefix;
  auto page = blobs.List(entities);
  if (!page.ok()) return "listing after Recover: " + page.status().ToString() + "\n";
  std::string left;
  for (const BlobItem& item : page->items)
    if (!internal::PrewritingTransaction(item.properties).empty() &&
        item.properties.lease_state == LeaseState::kLeased)
      left += "P1: " + item.name + " still holds the leased intent of transaction " +
              internal::PrewritingTransaction(item.properties) + " after Recover\n";
  return left;
}

std::string World::Finish() {
  std::string violation;
  // Every lease runs out; a fresh process recovers, then reads every key.
  clock_.Advance(std::chrono::minutes(5));
  StoreOptions after;
  after.clock = &clock_;
  clock_.set_sleep(nullptr);  // backoff just moves time now
  auto reader = Store::Open(dir_.path(), after);
  if (!reader.ok()) return "reopening the store: " + reader.status().ToString();
  Status recovered = (*reader)->Recover().status();
  if (recovered.ok()) violation += LeasedIntentsLeft((*reader)->blob_store());
  auto final_table = *(*reader)->OpenTable("sim");
  for (int k = 0; k < kNumKeys; ++k) {
    HistEntry e;
    e.who = "final read";
    HistOp g;
    g.kind = HistOp::Kind::kGet;
    g.key = KeyName(k);
    auto r = final_table.Get(kKeys[k][0], kKeys[k][1]);
    g.observed = ValueOf(r);
    e.ops.push_back(g);
    e.start = sched_.Step() + 1'000'000;
    e.end = e.start;
    const bool read = r.ok() || r.status().IsNotFound();
    e.outcome = read ? HistEntry::Outcome::kOk : HistEntry::Outcome::kNoEffect;
    e.detail = r.ok() ? "" : r.status().ToString();
    if (!read) violation = "final read failed: " + r.status().ToString() + "\n";
    history_.Add(std::move(e));
  }
  if (!recovered.ok()) violation += "recover failed: " + recovered.ToString() + "\n";
  violation += history_.Check();
  if (!monitor_.empty()) violation += "protocol monitor:\n" + monitor_ + history_.Describe();
  return violation;
}

}  // namespace blobtable::sim
