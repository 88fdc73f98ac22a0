// SPDX-License-Identifier: Apache-2.0
// `blobtable health`: Store::Health as JSON, its exit code for a probe.
#include <chrono>
#include <ostream>

#include <nlohmann/json.hpp>

#include "blobtable/entity.h"  // FormatDateTime
#include "tools/cli.h"
#include "tools/cli/registry.h"
#include "tools/open_store.h"

namespace blobtable::cli {
namespace {

struct HealthCommandOptions {};

std::string When(TimePoint t) { return FormatDateTime(std::chrono::time_point_cast<Ticks>(t)); }

int Run(HealthCommandOptions&, Context& c) {
  auto store = OpenStore(c);
  if (!store.ok()) return Fail(c.err, store.status());
  // Always a probe: a process that just opened the store has met nothing.
  const StoreHealth h = (*store)->Health();
  nlohmann::ordered_json j;
  j["reachable"] = h.reachable;
  if (h.last_error) j["last_error"] = Printable(h.last_error->ToString());
  if (h.last_error_at) j["last_error_at"] = When(*h.last_error_at);
  if (h.last_answer_at) j["last_answer_at"] = When(*h.last_answer_at);
  j["cache"] = h.cache;
  j["commits_in_flight"] = h.commits_in_flight;
  j["oldest_commit_ms"] = h.oldest_commit.count();
  j["finishing_backlog"] = h.finishing_backlog;
  j["oldest_finishing_ms"] = h.oldest_finishing.count();
  c.out << j.dump(2) << "\n";
  if (h.reachable) return kExitOk;
  return ExitCodeFor(h.last_error.value_or(Status::Unavailable("storage unreachable")));
}

}  // namespace

std::unique_ptr<Command> HealthCommand() {
  return MakeCommand<HealthCommandOptions>({
      .name = "health",
      .help = "health: whether storage answers (one request: a listing of at most one blob), "
              "the last failure and when, the cache's state, as JSON; the "
              "exit code is 0 if storage answered, else the failure's (6 unreachable, 10 "
              "credentials refused, 11 no store at the endpoint): a probe for a health check.",
      .example = "blobtable health --store \"$AZURE_STORAGE_CONNECTION_STRING\" >/dev/null || "
                 "alert",
      .run = Run,
  });
}

}  // namespace blobtable::cli
