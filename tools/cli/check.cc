// SPDX-License-Identifier: Apache-2.0
// `blobtable check`: every record and blob of a local store verified, no store
// opened.
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "blobtable/blob_store.h"
#include "blobtable/store.h"
#include "tools/cli.h"
#include "tools/cli/registry.h"

namespace blobtable::cli {
namespace {

struct CheckCommandOptions {};

int Run(CheckCommandOptions&, Context& c) {
  const std::string& location = c.global.location;
  if (IsConnectionString(location))
    throw UsageError{"check works on a local store (a directory), not on Azure Storage"};
  std::string dir = location.substr(0, 5) == "file:" ? location.substr(5) : location;
  auto report = CheckLocalStore(dir, c.global.store.container, c.global.store.local);
  if (!report.ok()) {
    const int code = Fail(c.err, report.status());
    // The data file itself damaged (truncated, a page out of place): the
    // store is as damaged as a blob can be, every time it is checked.
    return report.status().IsCorruption() ? kExitDamaged : code;
  }
  for (const StoreDamage& d : report->damaged)
    c.out << nlohmann::json{{"blob", d.blob}, {"damage", d.what}, {"detail", d.detail}}.dump(
                 -1, ' ', false,
                 nlohmann::json::error_handler_t::replace)  // a long name's key is binary
          << "\n";
  c.out << nlohmann::json{{"blobs", report->blobs},
                          {"unverified", report->unverified},
                          {"damaged", report->damaged.size()}}
               .dump()
        << "\n";
  return report->damaged.empty() ? kExitOk : kExitDamaged;
}

}  // namespace

std::unique_ptr<Command> CheckCommand() {
  return MakeCommand<CheckCommandOptions>({
      .name = "check",
      .help = "check: local store only. Reads every record and blob of the container and "
              "verifies its checksum. Prints each damaged blob as {\"blob\": NAME, \"damage\": "
              "\"record|data\", \"detail\": ...}, then {\"blobs\": N, \"unverified\": N, "
              "\"damaged\": N}; exit 8 if anything is damaged. Repair: `delete TABLE PK RK` or "
              "`put --mode upsert` the entity.",
      .example = "blobtable --store ./data check",
      .run = Run,
  });
}

}  // namespace blobtable::cli
