// SPDX-License-Identifier: Apache-2.0
// `blobtable counter add NAME [DELTA] [--shards N]` and `counter get NAME`.
#include <cstdint>
#include <ostream>
#include <string>

#include "blobtable/counter.h"
#include "tools/cli.h"
#include "tools/cli/registry.h"
#include "tools/open_store.h"

namespace blobtable::cli {
namespace {

struct CounterCommandOptions {
  std::string action;  // "add" or "get"
  std::string name;
  int64_t delta = 1;
  int shards = 1;
};

void Define(CLI::App& counter, CounterCommandOptions& o) {
  counter.require_subcommand(1, 1);
  auto* add = counter.add_subcommand("add", "adds DELTA (default 1; negative subtracts)");
  add->add_option("NAME", o.name)->required();
  add->add_option("DELTA", o.delta);
  add->add_option("--shards", o.shards, "N shard blobs for a hot counter, 1..64 (default 1)")
      ->check(CLI::Range(1, 64));
  add->callback([&o] { o.action = "add"; });
  auto* read = counter.add_subcommand("get", "prints the value");
  read->add_option("NAME", o.name)->required();
  read->callback([&o] { o.action = "get"; });
}

// "add": adds `delta` and prints the counter's total afterwards (with one
// shard what the add returned; with several, one more listing). "get":
// prints the total.
int Run(CounterCommandOptions& o, Context& c) {
  auto store = OpenStore(c);
  if (!store.ok()) return Fail(c.err, store.status());
  CounterOptions options;
  options.shards = o.shards;
  auto counter = Counter::Open(**store, o.name, options);
  if (!counter.ok()) return Fail(c.err, counter.status());
  if (o.action == "add") {
    auto added = counter->Add(o.delta);
    if (!added.ok()) return Fail(c.err, added.status());
    if (o.shards == 1) {
      c.out << *added << "\n";
      return kExitOk;
    }
  }
  auto total = counter->Get();
  if (!total.ok()) return Fail(c.err, total.status());
  c.out << *total << "\n";
  return kExitOk;
}

}  // namespace

std::unique_ptr<Command> CounterCommand() {
  return MakeCommand<CounterCommandOptions>({
      .name = "counter",
      .help = "counter add NAME [DELTA] [--shards N] | counter get NAME: a counter shared by "
              "every client (docs/coordination.md#coordination); prints its value after the add, "
              "or now.",
      .writes_if = [](const CounterCommandOptions& o) { return o.action == "add"; },
      .define = Define,
      .run = Run,
  });
}

}  // namespace blobtable::cli
