// SPDX-License-Identifier: Apache-2.0
// The unique-race workload (docs/indexes.md#maintaining): contests for
// one value of a unique index. Every second of the machine's monotonic
// clock is a contest: each worker, at its start, claims that second's value
// ("v<second>") with an entity of its own, a new row written by Insert or by
// UpsertMerge (a plain write), so that every worker races every other for
// one value at once (run it with six processes, and on the embedded store
// with --commit coordinator, so that claims commit through the protocol).
// The checker, per contest, on the final state (after Recover):
//   - at most one entity holds the value, and at most one claim said OK;
//   - a claim that said OK is the holder (an acknowledged write is kept);
//   - a claim that failed Conflict names the holder it lost to ("is
//     already held by"): a plain write that lost a race runs again, so it
//     never answers the race itself ("written by another client during the
//     commit"; 34 of 205 losers said that with the rule before issue 55);
//   - where every claim ended with a definite answer (none unknown, none
//     cut short by a kill), a contest in which no claim said OK and some
//     said Conflict has a holder: a Conflict says the claim lost to one, and
//     claims that all lose, leaving the value held by nobody, are what
//     issue 55 (item 10) saw;
//   - Store::CheckIndex finds the index clean (no entry missing, none
//     dangling, no value held twice).
#include <map>
#include <thread>

#include "devtools/stress/workload.h"

namespace blobtable::stress {
// Named, so that a unity build keeps its names apart from the other
// workloads'.
namespace unique_race_workload {
namespace {

constexpr uint64_t kContestNs = 1'000'000'000;  // a contest a second
const char* const kTable = "claims";
const char* const kByValue = "byValue";

std::string Value(uint64_t contest) { return "v" + std::to_string(contest); }

class UniqueRaceWorkload final : public Workload {
 public:
  std::string name() const override { return "unique-race"; }

  Status Setup(Store& store) override {
    return store.CreateIndex(kTable, {.name = kByValue, .properties = {"value"}, .unique = true});
  }

  // Waits for the next contest (a second's start, as every worker does, so
  // that their claims race) and makes this worker's claim in it.
  void RunOne(WorkerContext& ctx) override {
    const uint64_t contest = MonotonicNs() / kContestNs + 1;
    std::this_thread::sleep_for(std::chrono::nanoseconds(contest * kContestNs - MonotonicNs()));
    const bool insert = ctx.rng() % 10 < 7;
    const std::string row = "w" + std::to_string(ctx.worker) + "g" + std::to_string(ctx.gen);
    Entity e("c" + std::to_string(contest), row);
    e.Set("value", Value(contest));
    const std::vector<MicroOp> mops = {
        {insert ? "insert" : "upsert-merge", std::to_string(contest), row}};
    const int64_t index = ctx.history.Invoke("claim", mops);
    auto table = ctx.store.OpenTable(kTable);
    const Status s = !table.ok() ? table.status()
                     : insert    ? table->Insert(e).status()
                                 : table->UpsertMerge(e).status();
    ctx.history.Complete(index, "claim", OutcomeOf(s), mops, s.ok() ? "" : s.ToString());
  }

  std::string Check(const std::vector<Op>& history, Store& store) override;
  std::string Summary(const std::vector<Op>& history) const override;
};

bool SaidConflict(const Op& op) {
  return op.type == OpType::kFail && op.error.starts_with("Conflict");
}

// The claims of each contest, by its number.
std::map<std::string, std::vector<const Op*>> ByContest(const std::vector<Op>& history) {
  std::map<std::string, std::vector<const Op*>> out;
  for (const Op& op : history)
    if (op.f == "claim" && !op.mops.empty()) out[op.mops[0].key].push_back(&op);
  return out;
}

// Judges one contest's claims against the rows that hold its value.
std::string JudgeContest(const std::string& contest, const std::vector<const Op*>& claims,
                         const std::vector<std::string>& holders) {
  if (holders.size() > 1)
    return "value " + Value(std::stoull(contest)) + " is held by " + holders[0] + " and " +
           holders[1];
  std::vector<const Op*> won;
  bool all_definite = true, some_conflict = false;
  for (const Op* op : claims) {
    if (SaidConflict(*op) && op->error.find("is already held by") == std::string::npos)
      return "a claim lost with a Conflict that names no holder: " + op->Describe();
    if (op->type == OpType::kOk) won.push_back(op);
    if (op->type != OpType::kOk && op->type != OpType::kFail) all_definite = false;
    some_conflict = some_conflict || SaidConflict(*op);
  }
  if (won.size() > 1)
    return "two claims of contest " + contest + " said OK: " + won[0]->Describe() + " and " +
           won[1]->Describe();
  if (won.size() == 1) {
    const std::string row = won[0]->mops[0].value.get<std::string>();
    if (holders.empty() || holders[0] != row)
      return "the claim that said OK does not hold the value: " + won[0]->Describe() +
             (holders.empty() ? " (nobody does)" : " (" + holders[0] + " does)");
    return "";
  }
  if (all_definite && some_conflict && holders.empty()) {
    std::string said;
    for (const Op* op : claims) said += "\n  " + op->Describe();
    return "every claim of contest " + contest +
           " failed, some with Conflict (lost to a holder), and nobody holds the value:" + said;
  }
  return "";
}

std::string UniqueRaceWorkload::Check(const std::vector<Op>& history, Store& store) {
  auto report = store.CheckIndex(kTable, kByValue);
  if (!report.ok()) return "checking the index: " + report.status().ToString();
  if (!report->clean())
    return "index out of step: " + std::to_string(report->missing) + " missing, " +
           std::to_string(report->dangling) + " dangling, " + std::to_string(report->duplicates) +
           " duplicates; first: " + (report->problems.empty() ? "" : report->problems[0]);
  std::map<std::string, std::vector<std::string>> holders;  // contest -> rows holding its value
  auto table = store.OpenTable(kTable);
  if (!table.ok()) return "opening the table: " + table.status().ToString();
  auto scan = table->Scan();
  for (const Entity& e : scan)
    if (const std::string* v = e.FindAs<std::string>("value"); v && v->starts_with("v"))
      holders[v->substr(1)].push_back(e.row_key());
  if (!scan.status().ok()) return "reading the table: " + scan.status().ToString();
  for (const auto& [contest, claims] : ByContest(history))
    if (std::string why = JudgeContest(contest, claims, holders[contest]); !why.empty()) return why;
  return "";
}

std::string UniqueRaceWorkload::Summary(const std::vector<Op>& history) const {
  uint64_t contests = 0, won = 0, raced = 0, lost = 0, unclear = 0;
  for (const auto& [contest, claims] : ByContest(history)) {
    ++contests;
    bool someone_won = false;
    for (const Op* op : claims) {
      someone_won = someone_won || op->type == OpType::kOk;
      lost += SaidConflict(*op);
      unclear += op->type != OpType::kOk && op->type != OpType::kFail;
    }
    won += someone_won;
    raced += claims.size() > 1;
  }
  return std::to_string(contests) + " contests (" + std::to_string(raced) +
         " with several claimants), " + std::to_string(won) + " won by a claim that said OK; " +
         std::to_string(lost) + " claims lost with Conflict, " + std::to_string(unclear) +
         " with no definite answer";
}

}  // namespace
}  // namespace unique_race_workload

std::unique_ptr<Workload> MakeUniqueRaceWorkload() {
  return std::make_unique<unique_race_workload::UniqueRaceWorkload>();
}

}  // namespace blobtable::stress
