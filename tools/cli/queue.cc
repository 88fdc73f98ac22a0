// SPDX-License-Identifier: Apache-2.0
// `blobtable queue put|take|done|abandon|list NAME ...`: a WorkQueue from the
// shell.
#include <istream>
#include <iterator>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "blobtable/queue.h"
#include "tools/cli.h"
#include "tools/cli/registry.h"
#include "tools/open_store.h"

namespace blobtable::cli {
namespace {

struct QueueCommandOptions {
  std::string action;  // put, take, done, abandon, list
  std::string name;
  std::string body;  // put: the body (else stdin)
  bool body_given = false;
  std::string id, lease;  // done, abandon
  bool dead = false;      // list: the dead letters
  QueueOptions options;
};

void Define(CLI::App& queue, QueueCommandOptions& o) {
  queue.require_subcommand(1, 1);
  auto action = [&](const char* name, const char* help) {
    auto* sub = queue.add_subcommand(name, help);
    sub->add_option("NAME", o.name)->required();
    sub->callback([&o, name] { o.action = name; });
    return sub;
  };
  action("put", "put NAME [BODY]: adds an item (BODY, else stdin); prints its id")
      ->add_option_function<std::string>(
          "BODY", [&o](const std::string& b) { o.body = b, o.body_given = true; });
  action("take",
         "take NAME [--visibility SECONDS]: takes a visible item; prints "
         "{\"id\", \"lease\", \"dequeue_count\", \"body\"}; exit 3 if none")
      ->add_option("--visibility", o.options.visibility_seconds,
                   "SECONDS the item stays invisible to others, 15..60 (default 30)")
      ->check(CLI::Range(15, 60));
  for (const char* name : {"done", "abandon"}) {
    auto* sub = action(name, std::string(name) == "done"
                                 ? "done NAME ID LEASE: completes the item (exit 1 "
                                   "LeaseLost if its lease ran out)"
                                 : "abandon NAME ID LEASE: gives the item back at once");
    sub->add_option("ID", o.id)->required();
    sub->add_option("LEASE", o.lease)->required();
  }
  action("list", "list NAME [--dead]: the items (or dead letters), one JSON object a line")
      ->add_flag("--dead", o.dead, "the dead letters (items taken too often)");
}

// put: prints the new item's id.
int Put(WorkQueue& q, const QueueCommandOptions& o, Context& c) {
  const std::string body = o.body_given ? o.body
                                        : std::string(std::istreambuf_iterator<char>(c.in),
                                                      std::istreambuf_iterator<char>());
  auto id = q.Enqueue(body);
  if (!id.ok()) return Fail(c.err, id.status());
  c.out << *id << "\n";
  return kExitOk;
}

// take: prints {"id", "lease", "dequeue_count", "body"}; exit 3 if no item is
// visible.
int Take(WorkQueue& q, const QueueCommandOptions& o, Context& c) {
  auto item = q.Dequeue();
  if (!item.ok()) return Fail(c.err, item.status());
  if (!*item) return Fail(c.err, Status::NotFound("queue " + o.name + ": no item is visible"));
  nlohmann::ordered_json j;
  j["id"] = (*item)->id;
  j["lease"] = (*item)->lease_id;
  j["dequeue_count"] = (*item)->dequeue_count;
  j["body"] = (*item)->body;
  c.out << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  return kExitOk;
}

// list: one {"id", "dequeue_count", "taken"} a line.
int List(WorkQueue& q, const QueueCommandOptions& o, Context& c) {
  auto entries = o.dead ? q.DeadLetters() : q.List();
  if (!entries.ok()) return Fail(c.err, entries.status());
  for (const QueueEntry& e : *entries)
    c.out << nlohmann::ordered_json{{"id", e.id},
                                    {"dequeue_count", e.dequeue_count},
                                    {"taken", e.taken}}
                 .dump()
          << "\n";
  return kExitOk;
}

// done/abandon print nothing (done: exit 1 LeaseLost if the lease ran out, 3
// if the item is gone).
int Run(QueueCommandOptions& o, Context& c) {
  auto store = OpenStore(c);
  if (!store.ok()) return Fail(c.err, store.status());
  auto q = WorkQueue::Open(**store, o.name, o.options);
  if (!q.ok()) return Fail(c.err, q.status());
  if (o.action == "put") return Put(*q, o, c);
  if (o.action == "take") return Take(*q, o, c);
  if (o.action == "done" || o.action == "abandon") {
    QueueItem item;
    item.id = o.id;
    item.lease_id = o.lease;
    Status s = o.action == "done" ? q->Complete(item) : q->Abandon(item);
    return s.ok() ? kExitOk : Fail(c.err, s);
  }
  return List(*q, o, c);
}

}  // namespace

std::unique_ptr<Command> QueueCommand() {
  return MakeCommand<QueueCommandOptions>({
      .name = "queue",
      .help = "queue put|take|done|abandon|list NAME ...: a work queue shared by every client "
              "(docs/coordination.md#coordination): items taken under a lease, completed once.",
      .example = "id=$(blobtable queue put jobs \"resize 42\") && blobtable queue take jobs",
      .writes_if = [](const QueueCommandOptions& o) { return o.action == "put"; },
      .define = Define,
      .run = Run,
  });
}

}  // namespace blobtable::cli
