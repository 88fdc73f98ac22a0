// SPDX-License-Identifier: Apache-2.0
// The index workload (docs/indexes.md): sixteen people in four partitions,
// with a unique index on their email (six addresses for sixteen people, so
// claims collide) and an index on their team covering the email. Plain
// writes of every kind (insert, replace, merge, upsert, upsert-merge,
// delete) set, change or drop the email and the team; transactions swap two
// people's emails (a unique value given up and taken in one commit) or move
// one's email to another (made if absent) and delete the first; queries
// read each index by equality. Beside them, sixteen notes in a table whose
// only index (on their tag) is dropped and created again, as the team index
// is, by one op in 2,000 while the others write: a note's plain write
// may follow definitions without an index (on the embedded store neither
// the drop nor the create waits a grace: every commit checks the
// definitions it followed). The checker:
//   - every acknowledged index query answered only entities holding the
//     value asked for, and a unique query at most one;
//   - at the end (after Recover, and a rebuild cut short finished),
//     Store::CheckIndex finds the three indexes clean (I1: every entity has
//     exactly its entries, none dangles; I2: no value of the unique index
//     held twice), and, independently of it, a scan of the people finds no
//     email held twice, and each person's email and team query finds that
//     person (an entry missing).
#include <map>
#include <thread>

#include "devtools/stress/workload.h"

namespace blobtable::stress {
// Named, so that a unity build keeps its names apart from the other
// workloads' (Pk, Rk, kTable).
namespace index_workload {
namespace {

constexpr int kPeople = 16;
constexpr int kEmails = 6;
constexpr int kTeams = 4;
const char* const kTable = "people";
const char* const kByEmail = "byEmail";
const char* const kByTeam = "byTeam";
const char* const kNotes = "notes";
const char* const kByTag = "byTag";

std::string Pk(int p) { return "p" + std::to_string(p / 4); }
std::string Rk(int p) { return "r" + std::to_string(p % 4); }
std::string Person(int p) { return Pk(p) + "/" + Rk(p); }
std::string Email(int k) { return "e" + std::to_string(k) + "@x"; }

// [person, email or null, team or null] of each entity answered.
nlohmann::json Answered(const std::vector<Entity>& entities) {
  nlohmann::json out = nlohmann::json::array();
  for (const Entity& e : entities) {
    const std::string* email = e.FindAs<std::string>("email");
    const int32_t* team = e.FindAs<int32_t>("team");
    out.push_back({e.partition_key() + "/" + e.row_key(),
                   email ? nlohmann::json(*email) : nlohmann::json(),
                   team ? nlohmann::json(*team) : nlohmann::json()});
  }
  return out;
}

const char* const kWriteKinds[] = {"insert", "replace",      "merge",
                                   "upsert", "upsert-merge", "delete"};

// `e` written to `table` as a plain write of `kind` (one of kWriteKinds),
// any version it replaces ("*").
Status WriteOfKind(const Table& table, const std::string& kind, const Entity& e) {
  if (kind == "insert") return table.Insert(e).status();
  if (kind == "replace") return table.Replace(e, kAnyETag).status();
  if (kind == "merge") return table.Merge(e, kAnyETag).status();
  if (kind == "upsert") return table.Upsert(e).status();
  if (kind == "upsert-merge") return table.UpsertMerge(e).status();
  return table.Delete(e.partition_key(), e.row_key(), kAnyETag);
}

// The indexes a rebuild drops and creates again: (table, spec).
const std::vector<std::pair<std::string, IndexSpec>>& Rebuilt() {
  static const auto* rebuilt = new std::vector<std::pair<std::string, IndexSpec>>{
      {kTable, {.name = kByTeam, .properties = {"team"}, .covered = {"email"}}},
      {kNotes, {.name = kByTag, .properties = {"tag"}}}};
  return *rebuilt;
}

// Index `spec` of `table` as a rebuild leaves it, once no rebuild runs: one
// cut short (a process killed) is finished, a drop by dropping again, a
// build by creating it again.
Status FinishRebuild(Store& store, const std::string& table, const IndexSpec& spec) {
  Status created = store.CreateIndex(table, spec);
  if (!created.IsConflict()) return created;  // made, resumed, or an error
  auto indexes = store.ListIndexes(table);
  if (!indexes.ok()) return indexes.status();
  for (const IndexInfo& i : *indexes)
    if (i.spec.name == spec.name && i.state == IndexState::kReady) return Status::OK();
  Status dropped = store.DropIndex(table, spec.name, {.wait = true});
  if (!dropped.ok() && !dropped.IsNotFound()) return dropped;
  return store.CreateIndex(table, spec);
}

class IndexWorkload final : public Workload {
 public:
  std::string name() const override { return "index"; }

  // The indexes declared on the empty tables, concurrently (on Azure each
  // waits the definitions' grace: ten seconds on the store's clock).
  Status Setup(Store& store) override {
    std::vector<Status> rebuilt(Rebuilt().size());
    std::vector<std::thread> others;
    for (size_t k = 0; k < rebuilt.size(); ++k)
      others.emplace_back(
          [&, k] { rebuilt[k] = store.CreateIndex(Rebuilt()[k].first, Rebuilt()[k].second); });
    Status by_email =
        store.CreateIndex(kTable, {.name = kByEmail, .properties = {"email"}, .unique = true});
    for (std::thread& t : others) t.join();
    for (const Status& s : rebuilt)
      if (!s.ok()) return s;
    return by_email;
  }

  void RunOne(WorkerContext& ctx) override {
    const uint64_t dice = ctx.rng() % 100;
    if (dice < 35)
      PlainWrite(ctx);
    else if (dice < 50)
      NoteWrite(ctx);
    else if (dice < 60)
      Transaction(ctx);
    else if (dice < 99 || ctx.rng() % 20 != 0)
      Query(ctx);
    else
      Rebuild(ctx);  // one op in 2,000
  }

  std::string Check(const std::vector<Op>& history, Store& store) override;
  std::string Summary(const std::vector<Op>& history) const override;

 private:
  // One write of a random kind to a random person, with a random email
  // (or none) and team (or none). Logged as [kind, email, team].
  void PlainWrite(WorkerContext& ctx) {
    const int p = static_cast<int>(ctx.rng() % kPeople);
    const std::string kind = kWriteKinds[ctx.rng() % 6];
    Entity e(Pk(p), Rk(p));
    nlohmann::json email, team;
    if (ctx.rng() % 10 < 8) email = Email(static_cast<int>(ctx.rng() % kEmails));
    if (ctx.rng() % 10 < 8) team = static_cast<int32_t>(ctx.rng() % kTeams);
    if (email.is_string()) e.Set("email", email.get<std::string>());
    if (team.is_number()) e.Set("team", team.get<int32_t>());
    e.Set("by", "w" + std::to_string(ctx.worker));
    const std::vector<MicroOp> mops = {{"w", Person(p), {kind, email, team}}};
    const int64_t index = ctx.history.Invoke("write", mops);
    const Status s = WriteOfKind(*ctx.store.OpenTable(kTable), kind, e);
    ctx.history.Complete(index, "write", OutcomeOf(s), mops, s.ok() ? "" : s.ToString());
  }

  // Swaps two people's emails, or gives one's email to the other and
  // deletes the first: a unique value given up and taken in one commit.
  void Transaction(WorkerContext& ctx) {
    const int a = static_cast<int>(ctx.rng() % kPeople);
    const int b = (a + 1 + static_cast<int>(ctx.rng() % (kPeople - 1))) % kPeople;
    const bool swap = ctx.rng() % 2 == 0;
    const std::vector<MicroOp> mops = {{swap ? "s" : "m", Person(a), Person(b)}};
    const int64_t index = ctx.history.Invoke("txn", mops);
    auto done = [&](const Status& s) {
      ctx.history.Complete(index, "txn", OutcomeOf(s), mops, s.ok() ? "" : s.ToString());
    };
    auto table = ctx.store.OpenTable(kTable);
    auto txn = ctx.store.Begin(ctx.txn);
    if (!txn.ok()) return done(txn.status());
    auto ea = txn->Get(*table, Pk(a), Rk(a));
    if (!ea.ok()) return done(ea.status());
    auto eb = txn->Get(*table, Pk(b), Rk(b));
    if (!eb.ok() && !(eb.status().IsNotFound() && !swap)) return done(eb.status());
    const std::string* ma = ea->FindAs<std::string>("email");
    const std::string* mb = eb.ok() ? eb->FindAs<std::string>("email") : nullptr;
    if (ma == nullptr) return done(Status::Conflict("nothing to move"));
    Entity na = *ea, nb = eb.ok() ? *eb : Entity(Pk(b), Rk(b));
    nb.Set("email", *ma);
    Status s;
    if (swap) {
      if (mb == nullptr) return done(Status::Conflict("nothing to swap"));
      na.Set("email", *mb);
      s = txn->Replace(*table, na, ea->etag());
    } else {
      s = txn->Delete(*table, Pk(a), Rk(a), ea->etag());
    }
    if (s.ok()) s = eb.ok() ? txn->Replace(*table, nb, eb->etag()) : txn->Insert(*table, nb);
    done(s.ok() ? txn->Commit().status() : s);
  }

  // A plain write of a random kind to a random note, with a random tag or
  // none. Logged as [kind, tag].
  void NoteWrite(WorkerContext& ctx) {
    const int n = static_cast<int>(ctx.rng() % kPeople);
    const std::string kind = kWriteKinds[ctx.rng() % 6];
    Entity e(Pk(n), Rk(n));
    nlohmann::json tag;
    if (ctx.rng() % 10 < 8) tag = static_cast<int32_t>(ctx.rng() % kTeams);
    if (tag.is_number()) e.Set("tag", tag.get<int32_t>());
    const std::vector<MicroOp> mops = {{"n", Person(n), {kind, tag}}};
    const int64_t index = ctx.history.Invoke("note", mops);
    const Status s = WriteOfKind(*ctx.store.OpenTable(kNotes), kind, e);
    ctx.history.Complete(index, "note", OutcomeOf(s), mops, s.ok() ? "" : s.ToString());
  }

  // Drops one of the rebuilt indexes (its entries gone before it returns)
  // and creates it again, under the other workers' writes. Logged as
  // "rebuild"; the checker judges only the index the end holds.
  void Rebuild(WorkerContext& ctx) {
    const auto& [table, spec] = Rebuilt()[ctx.rng() % Rebuilt().size()];
    const std::vector<MicroOp> mops = {{"r", table + "." + spec.name, nullptr}};
    const int64_t index = ctx.history.Invoke("rebuild", mops);
    Status s = ctx.store.DropIndex(table, spec.name, {.wait = true});
    // Up to 1.5 s without it: long enough for every writer's copy of the
    // definitions to say so (read again after a second), so that writes
    // that followed them meet the create.
    if (ctx.clock != nullptr) ctx.clock->SleepFor(std::chrono::milliseconds(ctx.rng() % 1500));
    if (s.ok() || s.IsNotFound()) s = ctx.store.CreateIndex(table, spec);
    ctx.history.Complete(index, "rebuild", OutcomeOf(s), mops, s.ok() ? "" : s.ToString());
  }

  // One index by equality: an email ("qe", value asked: the email) or a
  // team ("qt"), the team's sometimes answered from the index alone.
  void Query(WorkerContext& ctx) {
    const bool by_email = ctx.rng() % 2 == 0;
    const nlohmann::json asked = by_email
                                     ? nlohmann::json(Email(static_cast<int>(ctx.rng() % kEmails)))
                                     : nlohmann::json(static_cast<int32_t>(ctx.rng() % kTeams));
    std::vector<MicroOp> mops = {{by_email ? "qe" : "qt", asked.dump(), nullptr}};
    const int64_t index = ctx.history.Invoke("query", mops);
    IndexQuery q;
    if (by_email)
      q.equal = {PropertyValue(asked.get<std::string>())};
    else
      q.equal = {PropertyValue(asked.get<int32_t>())};
    QueryOptions options;
    if (!by_email && ctx.rng() % 2 == 0) options.select = {"team", "email"};  // covered
    std::vector<Entity> all;
    auto table = ctx.store.OpenTable(kTable);
    auto scan = table->ScanIndex(by_email ? kByEmail : kByTeam, q, options);
    for (const Entity& e : scan) all.push_back(e);
    if (!scan.status().ok()) {
      ctx.history.Complete(index, "query", OpType::kFail, mops, scan.status().ToString());
      return;
    }
    mops[0].value = Answered(all);
    ctx.history.Complete(index, "query", OpType::kOk, mops);
  }
};

// What the final state says against I1 and I2, read without CheckIndex:
// no email held twice, and every person's email and team query finds them.
std::string CheckByQueries(Store& store) {
  auto table = store.OpenTable(kTable);
  std::map<std::string, std::string> holder;  // email -> person
  std::vector<Entity> people;
  auto scan = table->Scan();
  for (const Entity& e : scan) people.push_back(e);
  if (!scan.status().ok()) return "reading the table: " + scan.status().ToString();
  for (const Entity& e : people) {
    const std::string who = e.partition_key() + "/" + e.row_key();
    auto finds = [&](const char* index, const PropertyValue& v) -> std::string {
      auto page = table->QueryIndex(index, {.equal = {v}}, QueryOptions{});
      if (!page.ok()) return std::string("querying ") + index + ": " + page.status().ToString();
      for (const Entity& f : page->entities)
        if (f.partition_key() == e.partition_key() && f.row_key() == e.row_key()) return "";
      return who + " is missing from index " + index;
    };
    if (const std::string* email = e.FindAs<std::string>("email")) {
      if (auto [it, fresh] = holder.emplace(*email, who); !fresh)
        return "email " + *email + " is held by " + it->second + " and " + who;
      if (std::string why = finds(kByEmail, PropertyValue(*email)); !why.empty()) return why;
    }
    if (const int32_t* team = e.FindAs<int32_t>("team"))
      if (std::string why = finds(kByTeam, PropertyValue(*team)); !why.empty()) return why;
  }
  return "";
}

std::string IndexWorkload::Check(const std::vector<Op>& history, Store& store) {
  for (const Op& op : history) {
    if (op.f != "query" || op.type != OpType::kOk) continue;
    const MicroOp& m = op.mops[0];
    const nlohmann::json asked = nlohmann::json::parse(m.key);
    if (m.kind == "qe" && m.value.size() > 1)
      return "a unique index answered " + std::to_string(m.value.size()) +
             " holders of one email: " + op.Describe();
    for (const nlohmann::json& got : m.value)
      if (got[m.kind == "qe" ? 1 : 2] != asked)
        return "an index query answered an entity not holding the value asked: " + op.Describe();
  }
  for (const auto& [table, spec] : Rebuilt())
    if (Status finished = FinishRebuild(store, table, spec); !finished.ok())
      return "finishing a rebuild of " + table + "." + spec.name + ": " + finished.ToString();
  const std::vector<std::pair<std::string, std::string>> checked = {
      {kTable, kByEmail}, {kTable, kByTeam}, {kNotes, kByTag}};
  for (const auto& [table, index] : checked) {
    auto report = store.CheckIndex(table, index);
    if (!report.ok()) return "checking " + index + ": " + report.status().ToString();
    if (!report->clean())
      return "index " + index + " out of step: " + std::to_string(report->missing) + " missing, " +
             std::to_string(report->dangling) + " dangling, " + std::to_string(report->duplicates) +
             " duplicates; first: " + (report->problems.empty() ? "" : report->problems[0]);
  }
  return CheckByQueries(store);
}

std::string IndexWorkload::Summary(const std::vector<Op>& history) const {
  uint64_t writes = 0, refused = 0, txns = 0, queries = 0, rebuilds = 0, notes = 0;
  for (const Op& op : history) {
    if (op.f == "note" && op.type == OpType::kOk) ++notes;
    if (op.f == "rebuild" && op.type == OpType::kOk) ++rebuilds;
    if (op.f == "write" && op.type == OpType::kOk) ++writes;
    if (op.error.find("is already held by") != std::string::npos) ++refused;
    if (op.f == "txn" && op.type == OpType::kOk) ++txns;
    if (op.f == "query" && op.type == OpType::kOk) ++queries;
  }
  return std::to_string(writes) + " writes ok, " + std::to_string(refused) +
         " refused as duplicate emails, " + std::to_string(txns) + " transactions ok, " +
         std::to_string(queries) + " index queries ok, " + std::to_string(notes) +
         " note writes ok, " + std::to_string(rebuilds) + " index rebuilds ok";
}

}  // namespace
}  // namespace index_workload

std::unique_ptr<Workload> MakeIndexWorkload() {
  return std::make_unique<index_workload::IndexWorkload>();
}

}  // namespace blobtable::stress
