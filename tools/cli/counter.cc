// SPDX-License-Identifier: Apache-2.0
// `blobtable counter add NAME [DELTA] [--shards N]` and `counter get NAME`.
#include <charconv>
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
  std::string delta = "1";  // read by Run: CLI11 would clamp an int64 out of range
  int shards = 1;
};

void Define(CLI::App& counter, CounterCommandOptions& o) {
  counter.require_subcommand(1, 1);
  auto* add = counter.add_subcommand("add", "adds DELTA (default 1; negative subtracts)");
  add->add_option("NAME", o.name)->required();
  add->add_option("DELTA", o.delta, "a whole number (default 1)");
  add->add_option("--shards", o.shards, "N shard blobs for a hot counter, 1..64 (default 1)")
      ->check(CLI::Range(1, 64));
  add->callback([&o] { o.action = "add"; });
  auto* read = counter.add_subcommand("get", "prints the value");
  read->add_option("NAME", o.name)->required();
  read->callback([&o] { o.action = "get"; });
}

// A whole number in int64's range, or UsageError saying so.
int64_t ParseDelta(const std::string& text) {
  int64_t value = 0;
  const char* end = text.data() + text.size();
  auto [at, error] = std::from_chars(text.data(), end, value);
  if (error == std::errc::result_out_of_range)
    throw UsageError{"DELTA " + text + " is out of range: a counter adds whole numbers from " +
                     std::to_string(INT64_MIN) + " to " + std::to_string(INT64_MAX)};
  if (error != std::errc() || at != end || text.empty())
    throw UsageError{"DELTA " + text + " is not a whole number"};
  return value;
}

// "add": adds `delta` and prints the counter's total afterwards (one more
// listing: the add answers one shard's value, and the counter may have
// more shards than this call names). "get": prints the total.
int Run(CounterCommandOptions& o, Context& c) {
  const int64_t delta = o.action == "add" ? ParseDelta(o.delta) : 0;
  auto store = OpenStore(c);
  if (!store.ok()) return Fail(c.err, store.status());
  CounterOptions options;
  options.shards = o.shards;
  auto counter = Counter::Open(**store, o.name, options);
  if (!counter.ok()) return Fail(c.err, counter.status());
  if (o.action == "add") {
    auto added = counter->Add(delta);
    if (!added.ok()) return Fail(c.err, added.status());
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
      .example = "blobtable counter add visits 1",
      .writes_if = [](const CounterCommandOptions& o) { return o.action == "add"; },
      .define = Define,
      .run = Run,
  });
}

}  // namespace blobtable::cli
