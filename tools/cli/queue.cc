// SPDX-License-Identifier: Apache-2.0
// `blobtable queue put|take|done|abandon|extend|run|list NAME ...`: a
// WorkQueue from the shell.
#include <algorithm>
#include <chrono>
#include <istream>
#include <iterator>
#include <ostream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "blobtable/queue.h"
#include "tools/bulk.h"
#include "tools/cli.h"
#include "tools/cli/registry.h"
#include "tools/row_source.h"
#include "tools/held_command.h"
#include "tools/open_store.h"
#include "util/base64.h"
#include "util/utf8.h"

namespace blobtable::cli {
namespace {

using std::chrono::milliseconds;

struct QueueCommandOptions {
  std::string action;  // put, take, done, abandon, extend, run, list
  std::string name;
  std::string body;  // put: the body (else stdin)
  bool body_given = false;
  std::string taken, lease;          // done, abandon, extend: take's output, or ID LEASE
  bool wait = false;                 // take, run: wait for an item
  milliseconds timeout{-1};          // ... this long (negative: for ever)
  std::vector<std::string> command;  // run
  bool dead = false;                 // list: the dead letters
  QueueOptions options;
};

void DefineVisibility(CLI::App& sub, QueueCommandOptions& o) {
  sub.add_option("--visibility", o.options.visibility_seconds,
                 "SECONDS the item stays invisible to others, 15..60 (default 30)")
      ->check(CLI::Range(15, 60));
}

void DefineWaiting(CLI::App& sub, QueueCommandOptions& o) {
  DefineVisibility(sub, o);
  sub.add_flag("--wait", o.wait, "wait for an item if none is visible (polling, up to 2 s apart)");
  sub.add_option_function<double>(
         "--timeout", [&o](double s) { o.timeout = milliseconds(static_cast<int64_t>(s * 1000)); },
         "SECONDS: with --wait, give up after this long (exit 9; default: wait for ever)")
      ->check(AtLeast(0));
}

void Define(CLI::App& queue, QueueCommandOptions& o) {
  queue.require_subcommand(1, 1);
  auto action = [&](const char* name, const char* help) {
    auto* sub = queue.add_subcommand(name, help);
    sub->add_option("NAME", o.name)->required();
    sub->callback([&o, name] { o.action = name; });
    return sub;
  };
  action("put",
         "put NAME [BODY]: adds an item (BODY, else stdin, byte for byte: `echo` adds a "
         "newline, `printf %s` does not); prints its id")
      ->add_option_function<std::string>(
          "BODY", [&o](const std::string& b) { o.body = b, o.body_given = true; });
  DefineWaiting(*action("take",
                        "take NAME [--wait [--timeout SECONDS]]: takes a visible item; prints "
                        "{\"id\", \"lease\", \"dequeue_count\", \"body\"} on one line (a body "
                        "that is not UTF-8 as \"body_base64\"); exit 9 with no message if the "
                        "queue has no visible item"),
                o);
  for (const char* name : {"done", "abandon", "extend"}) {
    const std::string n = name;
    auto* sub = action(
        name, n == "done"      ? "done NAME TAKEN: completes the item (exit 1 LeaseLost if its "
                                 "lease ran out; it is delivered again)"
              : n == "abandon" ? "abandon NAME TAKEN: gives the item back at once"
                               : "extend NAME TAKEN [--visibility SECONDS]: restarts the item's "
                                 "visibility timeout (exit 1 LeaseLost if it ran out)");
    sub->add_option("TAKEN", o.taken,
                    "what `take` printed (one argument: quote it), or the item's id followed "
                    "by LEASE")
        ->required();
    sub->add_option("LEASE", o.lease, "the lease `take` printed, after the id");
    if (n == "extend") DefineVisibility(*sub, o);
  }
  auto* run = action("run",
                     "run NAME [--wait [--timeout SECONDS]] -- COMMAND [ARGS...]: takes an item "
                     "and runs the command with its body on stdin ($BLOBTABLE_QUEUE_ITEM: its "
                     "id), extending its lease while the command runs; completes it if the "
                     "command exits 0, gives it back otherwise. Exit code: the command's "
                     "(9 if there was no item)");
  DefineWaiting(*run, o);
  run->add_option("COMMAND", o.command, "the command and its arguments, after --")
      ->required()
      ->expected(-1);
  action("list", "list NAME [--dead]: the items (or dead letters), one JSON object a line")
      ->add_flag("--dead", o.dead, "the dead letters (items taken too often)");
}

// put: prints the new item's id.
int Put(WorkQueue& q, const QueueCommandOptions& o, Context& c) {
  auto body = o.body_given ? Result<std::string>(o.body)
                           : ReadInput(c.in, kMaxItemInputBytes, "stdin (the item's body)");
  if (!body.ok()) return Fail(c.err, body.status());
  auto id = q.Enqueue(*body);
  if (!id.ok()) return Fail(c.err, id.status());
  c.out << *id << "\n";
  return kExitOk;
}

// An item if one is visible, waiting for one as --wait and --timeout say;
// nullopt if there is none. Polls 100 ms apart at first, then up to 2 s.
Result<std::optional<QueueItem>> TakeOne(const WorkQueue& q, const QueueCommandOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  milliseconds pause(100);
  for (;;) {
    auto item = q.Dequeue();
    if (!item.ok() || *item || !o.wait) return item;
    milliseconds left = milliseconds::max();
    if (o.timeout.count() >= 0) {
      left = o.timeout -
             std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - start);
      if (left.count() <= 0) return item;
    }
    std::this_thread::sleep_for(std::min(pause, left));
    pause = std::min(pause * 2, milliseconds(2000));
  }
}

// No visible item: exit 9, said on stderr only to a person at a terminal
// (a script polling an empty queue is not in error).
int Empty(const QueueCommandOptions& o, Context& c) {
  if (ShowsProgress(c.err))  // stderr is a person's terminal
    c.err << "blobtable: queue " << o.name << " has no visible item\n";
  return kExitQueueEmpty;
}

// take: prints {"id", "lease", "dequeue_count", "body" or "body_base64"}.
int Take(WorkQueue& q, const QueueCommandOptions& o, Context& c) {
  auto item = TakeOne(q, o);
  if (!item.ok()) return Fail(c.err, item.status());
  if (!*item) return Empty(o, c);
  nlohmann::ordered_json j;
  j["id"] = (*item)->id;
  j["lease"] = (*item)->lease_id;
  j["dequeue_count"] = (*item)->dequeue_count;
  if (internal::IsValidUtf8((*item)->body))
    j["body"] = (*item)->body;
  else
    j["body_base64"] = internal::Base64Encode((*item)->body);
  c.out << j.dump() << "\n";
  return kExitOk;
}

// The delivery `done`, `abandon` and `extend` name: take's output as one
// argument, or an id and a lease.
Result<QueueItem> NamedDelivery(const QueueCommandOptions& o) {
  QueueItem item;
  if (!o.lease.empty()) {
    item.id = o.taken;
    item.lease_id = o.lease;
    return item;
  }
  const auto taken = nlohmann::json::parse(o.taken, nullptr, /*allow_exceptions=*/false);
  if (!taken.is_object() || !taken.contains("id") || !taken["id"].is_string() ||
      !taken.contains("lease") || !taken["lease"].is_string())
    return Status::InvalidArgument(
        "queue " + o.name +
        ": give what `queue take` printed (one argument, quoted), or the "
        "item's id and its lease");
  item.id = taken["id"].get<std::string>();
  item.lease_id = taken["lease"].get<std::string>();
  return item;
}

// run: takes an item and runs the command on it (tools/held_command.h).
int RunOnItem(WorkQueue& q, const QueueCommandOptions& o, const Store& store, Context& c) {
  auto item = TakeOne(q, o);
  if (!item.ok()) return Fail(c.err, item.status());
  if (!*item) return Empty(o, c);
  return CmdQueueRun(store, q, std::move(**item), o.options.visibility_seconds, o.command, c.err);
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

int Run(QueueCommandOptions& o, Context& c) {
  auto store = OpenStore(c);
  if (!store.ok()) return Fail(c.err, store.status());
  auto q = WorkQueue::Open(**store, o.name, o.options);
  if (!q.ok()) return Fail(c.err, q.status());
  if (o.action == "put") return Put(*q, o, c);
  if (o.action == "take") return Take(*q, o, c);
  if (o.action == "run") return RunOnItem(*q, o, **store, c);
  if (o.action == "list") return List(*q, o, c);
  auto item = NamedDelivery(o);
  if (!item.ok()) return Fail(c.err, item.status());
  const Status s = o.action == "done"      ? q->Complete(*item)
                   : o.action == "abandon" ? q->Abandon(*item)
                                           : q->Extend(&*item);
  return s.ok() ? kExitOk : Fail(c.err, s);
}

}  // namespace

std::unique_ptr<Command> QueueCommand() {
  return MakeCommand<QueueCommandOptions>({
      .name = "queue",
      .help = "queue put|take|done|abandon|extend|run|list NAME ...: a work queue shared by "
              "every client (docs/coordination.md#coordination): items taken under a lease, "
              "completed once.",
      .example = "blobtable queue put jobs \"resize 42\"\n"
                 "  blobtable queue run jobs --wait -- sh -c 'read job; echo \"$job\"'",
      .writes_if = [](const QueueCommandOptions& o) { return o.action == "put"; },
      .define = Define,
      .run = Run,
  });
}

}  // namespace blobtable::cli
