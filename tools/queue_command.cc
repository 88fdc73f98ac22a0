// SPDX-License-Identifier: Apache-2.0
#include "tools/queue_command.h"

#include <nlohmann/json.hpp>

#include <istream>
#include <iterator>
#include <ostream>

#include "tools/cli.h"

namespace blobtable::cli {

int CmdQueue(const Store& store, const QueueCommand& c, std::istream& in, std::ostream& out,
             std::ostream& err) {
  auto q = WorkQueue::Open(store, c.name, c.options);
  if (!q.ok()) return Fail(err, q.status());
  if (c.action == "put") {
    const std::string body = c.body_given ? c.body
                                          : std::string(std::istreambuf_iterator<char>(in),
                                                        std::istreambuf_iterator<char>());
    auto id = q->Enqueue(body);
    if (!id.ok()) return Fail(err, id.status());
    out << *id << "\n";
    return kExitOk;
  }
  if (c.action == "take") {
    auto item = q->Dequeue();
    if (!item.ok()) return Fail(err, item.status());
    if (!*item) return Fail(err, Status::NotFound("queue " + c.name + ": no item is visible"));
    nlohmann::ordered_json j;
    j["id"] = (*item)->id;
    j["lease"] = (*item)->lease_id;
    j["dequeue_count"] = (*item)->dequeue_count;
    j["body"] = (*item)->body;
    out << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return kExitOk;
  }
  if (c.action == "done" || c.action == "abandon") {
    QueueItem item;
    item.id = c.id;
    item.lease_id = c.lease;
    Status s = c.action == "done" ? q->Complete(item) : q->Abandon(item);
    return s.ok() ? kExitOk : Fail(err, s);
  }
  auto entries = c.dead ? q->DeadLetters() : q->List();  // list
  if (!entries.ok()) return Fail(err, entries.status());
  for (const QueueEntry& e : *entries)
    out << nlohmann::ordered_json{{"id", e.id},
                                  {"dequeue_count", e.dequeue_count},
                                  {"taken", e.taken}}
               .dump()
        << "\n";
  return kExitOk;
}

}  // namespace blobtable::cli
