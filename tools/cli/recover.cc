// SPDX-License-Identifier: Apache-2.0
// `blobtable recover [--discard-damaged] [--scan-everything]`: settles
// transactions whose coordinator died.
#include <ostream>

#include <nlohmann/json.hpp>

#include "tools/cli.h"
#include "tools/cli/registry.h"
#include "tools/open_store.h"

namespace blobtable::cli {
namespace {

struct RecoverCommandOptions {
  RecoverOptions recover;
};

void Define(CLI::App& recover, RecoverCommandOptions& o) {
  recover.add_flag("--discard-damaged", o.recover.discard_damaged,
                   "delete transaction records (and older releases' markers) that are damaged");
  recover.add_flag("--scan-everything", o.recover.scan_everything,
                   "also list every entity for intents no record names (costs a listing of the "
                   "whole store)");
}

// {"resolved": N, "in_flight": [{"txn": ID, "blobs": [...],
// "leases_run_out_within_seconds": 60}, ...]}
nlohmann::json RecoveryToJson(const RecoveryReport& report) {
  nlohmann::json in_flight = nlohmann::json::array();
  for (const RecoveryReport::InFlight& t : report.in_flight)
    in_flight.push_back({{"txn", t.txn_id},
                         {"blobs", t.blobs},
                         {"leases_run_out_within_seconds", RecoveryReport::kMaxLeaseSeconds}});
  return {{"resolved", report.resolved}, {"in_flight", in_flight}};
}

int Run(RecoverCommandOptions& o, Context& c) {
  auto store = OpenStore(c);
  if (!store.ok()) return Fail(c.err, store.status());
  auto report = (*store)->RecoverAndReport(o.recover);
  if (!report.ok()) return Fail(c.err, report.status());
  c.out << RecoveryToJson(*report).dump() << "\n";
  return kExitOk;
}

}  // namespace

std::unique_ptr<Command> RecoverCommand() {
  return MakeCommand<RecoverCommandOptions>({
      .name = "recover",
      .help = "recover [--discard-damaged] [--scan-everything]: finishes or undoes "
              "transactions whose coordinator died (normally done by whoever next touches their "
              "partitions), found from their records; prints {\"resolved\": N}. A "
              "damaged transaction record is reported (exit 1) after the others are resolved; "
              "--discard-damaged deletes such records instead (a committed one's writes not yet "
              "applied are lost). --scan-everything also lists every entity, for intents no "
              "record names (a coordinator that died in its first round, or a release from "
              "before 2026-11-26).",
      .example = "blobtable recover",
      .define = Define,
      .run = Run,
  });
}

}  // namespace blobtable::cli
