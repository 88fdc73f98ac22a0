// SPDX-License-Identifier: Apache-2.0
#include "tools/counter_command.h"

#include <ostream>

#include "blobtable/counter.h"
#include "tools/cli.h"

namespace blobtable::cli {

int CmdCounter(const Store& store, const std::string& action, const std::string& name,
               int64_t delta, int shards, std::ostream& out, std::ostream& err) {
  CounterOptions o;
  o.shards = shards;
  auto counter = Counter::Open(store, name, o);
  if (!counter.ok()) return Fail(err, counter.status());
  if (action == "add") {
    auto added = counter->Add(delta);
    if (!added.ok()) return Fail(err, added.status());
    if (shards == 1) {
      out << *added << "\n";
      return kExitOk;
    }
  }
  auto total = counter->Get();
  if (!total.ok()) return Fail(err, total.status());
  out << *total << "\n";
  return kExitOk;
}

}  // namespace blobtable::cli
