// SPDX-License-Identifier: Apache-2.0
#include "tools/cli.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <type_traits>
#include <string>
#include <vector>

#include <unistd.h>

#include <CLI/CLI.hpp>

#include "blobtable/store.h"
#include "blobtable/txn.h"
#include "tools/bulk.h"
#include "tools/entity_json.h"
#include "tools/entity_output.h"
#include "tools/counter_command.h"
#include "tools/held_command.h"
#include "tools/queue_command.h"
#include "util/macros.h"

namespace blobtable::cli {
namespace {

struct UsageError {
  std::string message;
};

// The -v request log: whole lines, one at a time. Requests go out from
// several threads at once (a query's reads, import's writes), and lines
// written by each straight to the stream came out interleaved.
class RequestLog {
 public:
  explicit RequestLog(std::ostream& out) : out_(out) {}
  void Line(const std::string& line) {
    std::lock_guard<std::mutex> lock(mu_);
    out_ << line << "\n";
  }

 private:
  std::mutex mu_;
  std::ostream& out_;
};

// Logs every BlobStore call (the -v request log).
using blobtable::StatusOf;
const Status& StatusOf(const BatchResult& b) { return b.status; }

class LoggingBlobStore final : public BlobStoreWrapper {
 public:
  LoggingBlobStore(std::shared_ptr<BlobStore> target, std::shared_ptr<RequestLog> log)
      : BlobStoreWrapper(std::move(target)), log_(std::move(log)) {}

  Result<GetResult> Get(std::string_view n, const ReadOptions& o) override {
    return Log("GET", n, [&] { return BlobStoreWrapper::Get(n, o); });
  }
  Result<GetResult> Head(std::string_view n, const AccessConditions& c) override {
    return Log("HEAD", n, [&] { return BlobStoreWrapper::Head(n, c); });
  }
  Result<WriteResult> Put(std::string_view n, std::string_view d, const PutOptions& o) override {
    return Log("PUT", n, [&] { return BlobStoreWrapper::Put(n, d, o); });
  }
  Status Delete(std::string_view n, const WriteOptions& o) override {
    return Log("DELETE", n, [&] { return BlobStoreWrapper::Delete(n, o); });
  }
  Result<ListPage> List(const ListOptions& o) override {
    return Log("LIST", o.prefix, [&] { return BlobStoreWrapper::List(o); });
  }
  Result<WriteResult> SetMetadata(std::string_view n, const Metadata& m,
                                  const WriteOptions& o) override {
    return Log("SET-METADATA", n, [&] { return BlobStoreWrapper::SetMetadata(n, m, o); });
  }
  Result<LeaseResult> AcquireLease(std::string_view n, int d, std::string_view p,
                                   const AccessConditions& c) override {
    return Log("LEASE-ACQUIRE", n, [&] { return BlobStoreWrapper::AcquireLease(n, d, p, c); });
  }
  Result<LeaseResult> RenewLease(std::string_view n, std::string_view id,
                                 const AccessConditions& c) override {
    return Log("LEASE-RENEW", n, [&] { return BlobStoreWrapper::RenewLease(n, id, c); });
  }
  Result<LeaseResult> ChangeLease(std::string_view n, std::string_view id, std::string_view p,
                                  const AccessConditions& c) override {
    return Log("LEASE-CHANGE", n, [&] { return BlobStoreWrapper::ChangeLease(n, id, p, c); });
  }
  Result<LeaseResult> ReleaseLease(std::string_view n, std::string_view id,
                                   const AccessConditions& c) override {
    return Log("LEASE-RELEASE", n, [&] { return BlobStoreWrapper::ReleaseLease(n, id, c); });
  }
  Result<LeaseResult> BreakLease(std::string_view n, std::optional<int> p,
                                 const AccessConditions& c) override {
    return Log("LEASE-BREAK", n, [&] { return BlobStoreWrapper::BreakLease(n, p, c); });
  }
  BatchResult CommitBatch(const std::vector<BatchOp>& ops) override {
    const std::string what = std::to_string(ops.size()) + " steps";
    return Log("BATCH", what, [&] { return BlobStoreWrapper::CommitBatch(ops); });
  }

 private:
  template <typename Fn>
  std::invoke_result_t<Fn> Log(const char* op, std::string_view name, Fn&& fn) {
    auto start = std::chrono::steady_clock::now();
    auto result = fn();
    double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    const Status& s = StatusOf(result);
    char buf[32];
    snprintf(buf, sizeof(buf), "%.2f", ms);
    log_->Line("blobtable: " + std::string(op) + " " + std::string(name) + " -> " +
               (s.ok() ? "ok" : std::string(CodeName(s.code()))) +
               (s.storage_code().empty() ? "" : " " + s.storage_code()) + " " + buf +
               " ms attempt 1");
    return result;
  }

  std::shared_ptr<RequestLog> log_;
};

std::string DefaultLocation() {
  if (const char* s = std::getenv("BLOBTABLE_STORE"); s && *s) return s;
  if (const char* s = std::getenv("AZURE_STORAGE_CONNECTION_STRING"); s && *s) return s;
  return "./blobtable-data";
}

int CmdPut(const Table& table, const std::string& mode,
           const std::optional<std::string>& if_match_opt, std::istream& in, std::ostream& out,
           std::ostream& err) {
  std::string input((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  nlohmann::json j = nlohmann::json::parse(input, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded())
    return Fail(err,
                Status::InvalidArgument("stdin is not valid JSON (expected one entity object)"));
  std::string json_etag;
  auto entity = EntityFromJson(j, &json_etag);
  if (!entity.ok()) return Fail(err, entity.status());
  std::string if_match = if_match_opt.value_or(json_etag.empty() ? "*" : json_etag);
  Result<Entity> r = Status::InvalidArgument("unknown --mode '" + mode +
                                             "' (insert, replace, merge, upsert, upsert-merge)");
  if (mode == "insert")
    r = table.Insert(*entity);
  else if (mode == "replace")
    r = table.Replace(*entity, if_match);
  else if (mode == "merge")
    r = table.Merge(*entity, if_match);
  else if (mode == "upsert")
    r = table.Upsert(*entity);
  else if (mode == "upsert-merge")
    r = table.UpsertMerge(*entity);
  if (!r.ok()) return Fail(err, r.status());
  out << EntityToJson(*r).dump() << "\n";
  return kExitOk;
}

// `q`'s keys and page size set by the caller; `limit` < 0: all. An export
// without its progress and summary, in `format`.
int CmdQuery(const Table& table, const QueryOptions& q, long limit, const std::string& format,
             std::ostream& out, std::ostream& err) {
  BulkOptions o;
  o.quiet = true;
  o.limit = limit;
  o.format = format;
  return CmdExport(table, q, o, out, err);
}

int CmdGet(const Table& table, const std::string& pk, const std::string& rk,
           const std::string& format, std::ostream& out, std::ostream& err) {
  auto output = MakeEntityOutput(format, /*many=*/false, out);
  if (!output)
    return Fail(err,
                Status::InvalidArgument("unknown --format '" + format + "' (jsonl, json, table)"));
  auto e = table.Get(pk, rk);
  if (!e.ok()) return Fail(err, e.status());
  output->Add(*e);
  output->Finish();
  WarnIfStale(e->stale(), err);
  return kExitOk;
}

int CmdTxn(Store& store, std::istream& in, std::ostream& out, std::ostream& err,
           const TransactionOptions& options) {
  std::string input((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  nlohmann::json ops = nlohmann::json::parse(input, nullptr, /*allow_exceptions=*/false);
  if (ops.is_discarded() || !ops.is_array())
    return Fail(err, Status::InvalidArgument("stdin must be a JSON array of operations"));
  auto txn = store.Begin(options);
  if (!txn.ok()) return Fail(err, txn.status());
  for (size_t n = 0; n < ops.size(); ++n) {
    const nlohmann::json& op = ops[n];
    auto bad = [&](const std::string& why) {
      return Fail(err, Status::InvalidArgument("operation " + std::to_string(n) + ": " + why));
    };
    if (!op.is_object() || !op.contains("op") || !op["op"].is_string() || !op.contains("table") ||
        !op["table"].is_string() || !op.contains("entity"))
      return bad("needs \"op\", \"table\" and \"entity\"");
    std::string kind = op["op"], json_etag;
    auto table = store.OpenTable(op["table"].get<std::string>());
    if (!table.ok()) return Fail(err, table.status());
    auto entity = EntityFromJson(op["entity"], &json_etag);
    if (!entity.ok())
      return Fail(err, entity.status().WithContext("operation " + std::to_string(n)));
    std::string if_match = json_etag.empty() ? "*" : json_etag;
    if (op.contains("if_match")) {
      if (!op["if_match"].is_string()) return bad("\"if_match\" must be a string");
      if_match = op["if_match"];
    }
    Status s;
    const Entity& e = *entity;
    if (kind == "insert")
      s = txn->Insert(*table, e);
    else if (kind == "replace")
      s = txn->Replace(*table, e, if_match);
    else if (kind == "merge")
      s = txn->Merge(*table, e, if_match);
    else if (kind == "upsert")
      s = txn->Upsert(*table, e);
    else if (kind == "upsert-merge")
      s = txn->UpsertMerge(*table, e);
    else if (kind == "delete")
      s = txn->Delete(*table, e.partition_key(), e.row_key(), if_match);
    else if (kind == "check")
      s = txn->Check(*table, e.partition_key(), e.row_key(),
                     op.contains("if_match") ? if_match : json_etag);
    else
      return bad("unknown op '" + kind + "'");
    if (!s.ok()) return Fail(err, s.WithContext("operation " + std::to_string(n)));
  }
  auto committed = txn->Commit();
  if (!committed.ok()) return Fail(err, committed.status());
  nlohmann::ordered_json result;
  result["committed"] = nlohmann::ordered_json::array();
  for (const CommittedWrite& w : *committed) {
    nlohmann::ordered_json j;
    j["table"] = w.table;
    j["PartitionKey"] = w.partition_key;
    j["RowKey"] = w.row_key;
    j["odata.etag"] = w.etag;
    if (!w.applied) j["applied"] = false;  // committed; the next reader applies it
    result["committed"].push_back(j);
  }
  out << result.dump() << "\n";
  return kExitOk;
}

int CmdLocate(const Store& store, const Table& table, const std::string& pk,
              const std::optional<std::string>& rk, std::ostream& out, std::ostream& err) {
  nlohmann::ordered_json j;
  j["store"] = store.blob_store().Location();
  j["container"] = store.blob_store().container();
  if (rk) {
    auto name = table.EntityBlobName(pk, *rk);
    if (!name.ok()) return Fail(err, name.status());
    j["entity_blob"] = *name;
  }
  auto lock = table.LockBlobName(pk);
  if (!lock.ok()) return Fail(err, lock.status());
  j["lock_blob"] = *lock;
  out << j.dump() << "\n";
  return kExitOk;
}

int CmdCheck(const std::string& location, const StoreOptions& options, std::ostream& out,
             std::ostream& err) {
  if (IsConnectionString(location))
    throw UsageError{"check works on a local store (a directory), not on Azure Storage"};
  std::string dir = location.substr(0, 5) == "file:" ? location.substr(5) : location;
  auto report = CheckLocalStore(dir, options);
  if (!report.ok()) return Fail(err, report.status());
  for (const StoreDamage& d : report->damaged)
    out << nlohmann::json{{"blob", d.blob}, {"damage", d.what}, {"detail", d.detail}}.dump(
               -1, ' ', false,
               nlohmann::json::error_handler_t::replace)  // a long name's key is binary
        << "\n";
  out << nlohmann::json{{"blobs", report->blobs},
                        {"unverified", report->unverified},
                        {"damaged", report->damaged.size()}}
             .dump()
      << "\n";
  return report->damaged.empty() ? kExitOk : kExitDamaged;
}

// `cache stats` and `cache clear`, on the directory the options name.
int CmdCache(const std::string& action, const StoreOptions& options, std::ostream& out,
             std::ostream& err) {
  const std::string dir =
      options.cache_directory.empty() ? DefaultCacheDirectory() : options.cache_directory;
  if (dir.empty())
    return Fail(err, Status::InvalidArgument("no cache directory: set XDG_CACHE_HOME or HOME, "
                                             "or give --cache DIR"));
  if (action == "clear") {
    Status s = ClearCache(dir);
    if (!s.ok()) return Fail(err, s);
    out << nlohmann::json{{"directory", dir}, {"cleared", true}}.dump() << "\n";
    return kExitOk;
  }
  auto stats = ReadCacheStats(dir);
  if (!stats.ok()) return Fail(err, stats.status());
  nlohmann::ordered_json j;
  j["directory"] = stats->directory;
  j["entries"] = stats->entries;
  j["bytes"] = stats->bytes;
  j["hits"] = stats->hits;
  j["not_modified"] = stats->not_modified;
  j["changed"] = stats->changed;
  j["misses"] = stats->misses;
  j["bytes_saved"] = stats->bytes_saved;
  j["evictions"] = stats->evictions;
  j["stale"] = stats->stale;
  out << j.dump() << "\n";
  return kExitOk;
}

constexpr char kDescription[] =
    R"(blobtable: an embedded table store on blob storage.

Entities are JSON in the Azure Tables form: "PartitionKey", "RowKey",
"Timestamp", "odata.etag", and properties, with "Name@odata.type" annotations
for Edm.Double (always printed), Edm.Int64 (a string), Edm.Binary (base64),
Edm.Guid and Edm.DateTime (on input, Int32, Double, Boolean and String may follow
from the JSON value). Options go before or after the command.)";

constexpr char kFooter[] =
    R"(Exit codes: 0 ok, 2 invalid input (usage, key, JSON, size), 3 not found,
4 conflict (ETag mismatch or already exists), 5 lock not acquired in time,
6 storage unreachable, 7 outcome unknown (a commit may or may not have
happened: read its entities or run `recover` before retrying), 8 damaged
blobs found by check, 1 anything else. Errors go to stderr.)";

// Everything the command line sets.
struct Command {
  std::string location = DefaultLocation();
  StoreOptions options;
  TransactionOptions txn_options;
  bool verbose = false;
  std::string table, pk, rk;
  std::optional<std::string> optional_rk, if_match;
  std::string mode = "insert";
  QueryOptions query;
  long limit = -1;
  std::string format = "jsonl";
  bool no_create = false;
  bool ignore_missing = false;
  std::string lock_name;  // lock, leader and counter: the NAME
  LockOptions lock;
  std::vector<std::string> command;
  LeaderOptions leader;
  std::chrono::milliseconds leader_timeout{-1};
  int conflict_exit_code = kExitLockTimeout;  // lock and leader: could not be had in time
  QueueCommand queue;
  std::string counter_action;  // "add" or "get"
  int64_t delta = 1;
  int shards = 1;
  std::string cache_action;  // "stats" or "clear"
  bool discard_damaged = false;
  BulkOptions bulk;
};

// Declares the commands and their options on `app`, writing into `c`.
void DefineCommands(CLI::App& app, Command& c) {
  app.set_help_flag("-h,--help", "this help");
  app.set_version_flag("--version", "blobtable " BLOBTABLE_VERSION);
  app.footer(kFooter);
  app.require_subcommand(1, 1);
  app.fallthrough();  // global options may follow the command
  app.add_option("--store", c.location,
                 "a directory (the embedded store: put, import and txn create it if missing, "
                 "other commands exit 3 \"no store at\"), or an Azure Storage "
                 "connection string (\"UseDevelopmentStorage=true\" for Azurite on "
                 "127.0.0.1:10000; add \"HttpTransport=cpprest\" for the second HTTP transport). "
                 "Default: $BLOBTABLE_STORE, else $AZURE_STORAGE_CONNECTION_STRING, else "
                 "./blobtable-data");
  app.add_flag("--no-create", c.no_create,
               "put, import and txn: refuse (exit 3) instead of creating a store or container "
               "that does not exist");
  app.add_option("--container", c.options.container,
                 "the container holding the tables (default: blobtable)");
  app.add_option_function<double>(
         "--lock-timeout",
         [&c](double seconds) {
           auto ms = std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
           c.options.busy_timeout = ms;
           c.txn_options.lock_timeout = ms;
         },
         "SECONDS to wait for a lock or an entity leased by a transaction in progress before "
         "exit code 5 (default 30 for transactions, 70 for single writes)")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("-v,--verbose", c.verbose,
               "log every storage request to stderr (method, blob, status, error code, "
               "milliseconds, attempt; never keys or signatures); a revalidated cached entity "
               "shows as 304");
  // The local cache (Azure stores only; docs/cache.md#the-local-cache).
  app.add_option("--cache", c.options.cache_directory,
                 "DIR of the local cache of an Azure store (default: $XDG_CACHE_HOME/blobtable, "
                 "else ~/.cache/blobtable)");
  app.add_flag_callback(
      "--no-cache", [&c] { c.options.cache = false; },
      "read an Azure store without the local cache");
  app.add_option_function<double>(
         "--max-stale",
         [&c](double seconds) {
           c.options.read_policy = ReadPolicy::MaxStale(
               std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000)));
         },
         "SECONDS: get and query answer from the cache without a request if storage confirmed "
         "the copy less than this long ago")
      ->check(CLI::NonNegativeNumber);
  app.add_flag_callback(
      "--offline", [&c] { c.options.read_policy = ReadPolicy::Offline(); },
      "get and query never contact storage: cached copies (with a warning "
      "that they are stale), else not found (exit 3)");

  auto* put = app.add_subcommand(
      "put",
      "put TABLE [--mode insert|replace|merge|upsert|upsert-merge] [--if-match ETAG]: reads one "
      "entity as JSON on stdin and writes it; prints the stored entity with its new odata.etag. "
      "Default mode: insert (fails if it exists). replace/merge are conditional on --if-match, "
      "else on the input's \"odata.etag\", else unconditional (\"*\").");
  put->add_option("TABLE", c.table)->required();
  put->add_option("--mode", c.mode)
      ->check(CLI::IsMember({"insert", "replace", "merge", "upsert", "upsert-merge"}));
  put->add_option("--if-match", c.if_match, "ETAG");

  const auto formats = CLI::IsMember({"jsonl", "json", "table"});
  auto* get = app.add_subcommand(
      "get",
      "get TABLE PK RK [--format jsonl|json|table]: prints the entity (jsonl, the "
      "default: one line of JSON; json: indented; table: aligned columns).");
  get->add_option("TABLE", c.table)->required();
  get->add_option("PK", c.pk)->required();
  get->add_option("RK", c.rk)->required();
  get->add_option("--format", c.format, "jsonl (default), json or table")->check(formats);

  auto* del = app.add_subcommand(
      "delete",
      "delete TABLE PK RK [--if-match ETAG] [--ignore-missing]: deletes the entity "
      "(unconditionally unless --if-match is given); exit 3 if it does not exist, "
      "unless --ignore-missing.");
  del->add_option("TABLE", c.table)->required();
  del->add_option("PK", c.pk)->required();
  del->add_option("RK", c.rk)->required();
  del->add_option("--if-match", c.if_match, "ETAG");
  del->add_flag("--ignore-missing", c.ignore_missing,
                "an entity (or store) that does not exist is not an error (exit 0)");

  auto* query = app.add_subcommand(
      "query",
      "query TABLE [--pk PK] [--rk-from RK] [--rk-to RK] [--rk-prefix P] [--filter "
      "EXPR] [--select A,B] [--limit N] [--top N] [--format jsonl|json|table]: prints "
      "matching entities in (PartitionKey, RowKey) order, one JSON object a line by "
      "default; the RowKey range is inclusive. --filter: an Azure Tables $filter "
      "(docs/api.md#filters); --select: only these properties. --limit N stops after N "
      "entities; --top N is the page size (1..1000, as in the API).");
  query->add_option("TABLE", c.table)->required();
  query->add_option("--pk", c.query.partition_key);
  query->add_option("--rk-from", c.query.row_key_from);
  query->add_option("--rk-to", c.query.row_key_to);
  query->add_option("--filter", c.query.filter, "EXPR, e.g. \"Price ge 10.0 and Active eq true\"");
  query->add_option("--select", c.query.select, "A,B: only these properties")->delimiter(',');
  query->add_option("--rk-prefix", c.query.row_key_prefix, "P: only RowKeys starting with P");
  query->add_option("--limit", c.limit, "N: at most N entities in all")->check(CLI::PositiveNumber);
  query->add_option("--top", c.query.top, "N: entities a page, 1..1000 (default 1000)")
      ->check(CLI::Range(1, 1000));
  query->add_option("--format", c.format, "jsonl (default), json (an array) or table")
      ->check(formats);

  auto* exp = app.add_subcommand(
      "export",
      "export TABLE [--pk PK [--rk-from RK] [--rk-to RK]] [--filter EXPR] [--quiet]: "
      "every row, one JSON object a line (the form `get` prints) on stdout; progress "
      "on stderr when it is a terminal, and a summary line.");
  exp->add_option("TABLE", c.table)->required();
  exp->add_option("--pk", c.query.partition_key);
  exp->add_option("--rk-from", c.query.row_key_from, "RK: from this RowKey (with --pk)");
  exp->add_option("--rk-to", c.query.row_key_to,
                  "RK: to this one, inclusive (with --pk and --rk-from, progress shows how far)");
  exp->add_option("--filter", c.query.filter, "EXPR: only matching rows (docs/api.md#filters)");
  exp->add_flag("--quiet", c.bulk.quiet, "no progress, no summary");

  auto* imp = app.add_subcommand(
      "import",
      "import TABLE [--mode insert|upsert|replace|merge] [--parallel N] "
      "[--stop-on-error] [--quiet]: one entity a line on stdin (the form `get` "
      "prints). Every bad line or failed row is reported with its line number; the "
      "others go on. insert skips existing rows; upsert (the default) is safe to rerun. "
      "Exit 0 only if no row failed.");
  imp->add_option("TABLE", c.table)->required();
  imp->add_option("--mode", c.bulk.mode, "insert, upsert (default), replace or merge");
  imp->add_option("--parallel", c.bulk.parallel, "writes in flight at once (default 16)")
      ->check(CLI::Range(1, 256));
  imp->add_flag("--stop-on-error", c.bulk.stop_on_error, "stop at the first failed row");
  imp->add_flag("--quiet", c.bulk.quiet, "no progress, no summary");

  auto* locate = app.add_subcommand(
      "locate",
      "locate TABLE PK [RK]: prints where the entity and its partition's lock blob "
      "live, as JSON: {\"container\": ..., \"entity_blob\": ..., \"lock_blob\": ...}");
  locate->add_option("TABLE", c.table)->required();
  locate->add_option("PK", c.pk)->required();
  locate->add_option("RK", c.optional_rk);

  app.add_subcommand(
      "txn",
      "txn [--lock-timeout SECONDS]: reads a JSON array of operations on stdin and commits them "
      "atomically: {\"op\": \"insert|replace|merge|upsert|upsert-merge|delete|check\", "
      "\"table\": T, \"entity\": {...}, \"if_match\": ETAG} (delete and check take "
      "PartitionKey/RowKey from \"entity\"; check asserts the entity's ETag, \"\" meaning it "
      "must not exist). Prints {\"committed\": [{\"table\", \"PartitionKey\", \"RowKey\", "
      "\"odata.etag\"}, ...]}. Exit 4 on any ETag conflict, 5 on a lock timeout.");
  // lock and leader: NAME [--timeout S] [--lease S] -- COMMAND ARGS...
  auto held_command = [&c](CLI::App* sub, std::chrono::milliseconds* timeout, int* lease,
                           const char* timeout_help) {
    sub->add_option("NAME", c.lock_name)->required();
    sub->add_option("COMMAND", c.command, "the command and its arguments, after --")
        ->required()
        ->expected(-1);
    sub->add_option_function<double>(
           "--timeout",
           [timeout](double s) {
             *timeout = std::chrono::milliseconds(static_cast<int64_t>(s * 1000));
           },
           timeout_help)
        ->check(CLI::NonNegativeNumber);
    sub->add_option("--lease", *lease, "SECONDS, 15..60 (default 30)")->check(CLI::Range(15, 60));
    sub->add_option("--conflict-exit-code", c.conflict_exit_code,
                    "N: the exit code when it could not be had in time (default 5), as flock -E, "
                    "to tell it from the command's own")
        ->check(CLI::Range(0, 255));
  };
  held_command(
      app.add_subcommand(
          "lock",
          "lock NAME [--timeout SECONDS] [--lease SECONDS] -- COMMAND [ARGS...]: runs the "
          "command while holding the lock NAME (shared by every client of the store), like "
          "flock(1). Waits up to --timeout (default 30) for it, else exit 5 (or "
          "--conflict-exit-code). The lease (default 30 s, 15..60) is renewed while the command "
          "runs; the command dies with this process, and if the lock is lost it gets SIGTERM, "
          "then SIGKILL before the lease can run out on storage. The command sees the fencing "
          "token in $BLOBTABLE_LOCK_TOKEN. Exit code: the command's."),
      &c.lock.timeout, &c.lock.lease_seconds,
      "SECONDS to wait while another client holds it (0: one try)");
  held_command(
      app.add_subcommand(
          "leader",
          "leader NAME [--timeout SECONDS] [--lease SECONDS] -- COMMAND [ARGS...]: campaigns to "
          "lead NAME and runs the command only while leader (its term in "
          "$BLOBTABLE_LEADER_TERM); stops it (SIGTERM, then SIGKILL before the lease can run out "
          "on storage) if leadership is lost; resigns when it ends. Waits for ever unless "
          "--timeout (then exit 5, or --conflict-exit-code). Exit code: the command's."),
      &c.leader_timeout, &c.leader.lease_seconds,
      "SECONDS to wait to become leader (default: for ever)");
  auto* queue = app.add_subcommand(
      "queue",
      "queue put|take|done|abandon|list NAME ...: a work queue shared by every client "
      "(docs/coordination.md#coordination): items taken under a lease, completed once.");
  queue->require_subcommand(1, 1);
  auto queue_action = [&c, queue](const char* action, const char* help) {
    auto* sub = queue->add_subcommand(action, help);
    sub->add_option("NAME", c.queue.name)->required();
    sub->callback([&c, action] { c.queue.action = action; });
    return sub;
  };
  queue_action("put", "put NAME [BODY]: adds an item (BODY, else stdin); prints its id")
      ->add_option_function<std::string>(
          "BODY", [&c](const std::string& b) { c.queue.body = b, c.queue.body_given = true; });
  queue_action("take",
               "take NAME [--visibility SECONDS]: takes a visible item; prints "
               "{\"id\", \"lease\", \"dequeue_count\", \"body\"}; exit 3 if none")
      ->add_option("--visibility", c.queue.options.visibility_seconds,
                   "SECONDS the item stays invisible to others, 15..60 (default 30)")
      ->check(CLI::Range(15, 60));
  for (const char* action : {"done", "abandon"}) {
    auto* sub = queue_action(action, std::string(action) == "done"
                                         ? "done NAME ID LEASE: completes the item (exit 1 "
                                           "LeaseLost if its lease ran out)"
                                         : "abandon NAME ID LEASE: gives the item back at once");
    sub->add_option("ID", c.queue.id)->required();
    sub->add_option("LEASE", c.queue.lease)->required();
  }
  queue_action("list", "list NAME [--dead]: the items (or dead letters), one JSON object a line")
      ->add_flag("--dead", c.queue.dead, "the dead letters (items taken too often)");
  auto* counter = app.add_subcommand(
      "counter",
      "counter add NAME [DELTA] [--shards N] | counter get NAME: a counter shared by "
      "every client (docs/coordination.md#coordination); prints its value after the add, or now.");
  counter->require_subcommand(1, 1);
  auto* add = counter->add_subcommand("add", "adds DELTA (default 1; negative subtracts)");
  add->add_option("NAME", c.lock_name)->required();
  add->add_option("DELTA", c.delta);
  add->add_option("--shards", c.shards, "N shard blobs for a hot counter, 1..64 (default 1)")
      ->check(CLI::Range(1, 64));
  add->callback([&c] { c.counter_action = "add"; });
  auto* read = counter->add_subcommand("get", "prints the value");
  read->add_option("NAME", c.lock_name)->required();
  read->callback([&c] { c.counter_action = "get"; });
  auto* recover = app.add_subcommand(
      "recover",
      "recover [--discard-damaged]: finishes or undoes transactions whose coordinator died "
      "(normally done by whoever next touches their partitions); prints {\"resolved\": N}. A "
      "damaged transaction record is reported (exit 1) after the others are resolved; "
      "--discard-damaged deletes such records instead (a committed one's writes not yet "
      "applied are lost).");
  recover->add_flag("--discard-damaged", c.discard_damaged,
                    "delete transaction records that are damaged");
  auto* cache = app.add_subcommand(
      "cache",
      "cache stats|clear: the local cache of Azure stores in --cache DIR (or the "
      "default directory). stats prints its counts as JSON (every process that used "
      "it adds its own when it closes), clear empties it.");
  cache->require_subcommand(1, 1);
  cache->add_subcommand("stats", "prints the cache's counts and size as JSON")->callback([&c] {
    c.cache_action = "stats";
  });
  cache->add_subcommand("clear", "drops every cached entry and zeroes the counts")->callback([&c] {
    c.cache_action = "clear";
  });
  app.add_subcommand(
      "check",
      "check: local store only. Reads every record and blob of the container and verifies its "
      "checksum. Prints each damaged blob as {\"blob\": NAME, \"damage\": \"record|data\", "
      "\"detail\": ...}, then {\"blobs\": N, \"unverified\": N, \"damaged\": N}; exit 8 if "
      "anything is damaged. Repair: `delete TABLE PK RK` or `put --mode upsert` the entity.");
}

// Runs the parsed command `name`.
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

int Execute(const std::string& name, Command& c, std::istream& in, std::ostream& out,
            std::ostream& err) {
  auto log = std::make_shared<RequestLog>(err);
  if (c.verbose && IsConnectionString(c.location)) {
    // The Azure backend logs every HTTP attempt itself (with retries).
    c.options.request_log = [log](const std::string& line) { log->Line(line); };
  } else if (c.verbose) {
    c.options.wrap_blob_store = [log](std::shared_ptr<BlobStore> backend) {
      return std::make_shared<LoggingBlobStore>(std::move(backend), log);
    };
  }
  if (name == "check") return CmdCheck(c.location, c.options, out, err);
  if (name == "cache") return CmdCache(c.cache_action, c.options, out, err);
  // Only writes make a store: a mistyped --store must not answer "not
  // found" from a new, empty one.
  const bool writes = name == "put" || name == "import" || name == "txn" || name == "lock" ||
                      name == "leader" || (name == "queue" && c.queue.action == "put") ||
                      (name == "counter" && c.counter_action == "add");
  // A bad table name is refused before anything is made.
  if (!c.table.empty()) {
    Status valid = ValidateTableName(c.table);
    if (!valid.ok()) return Fail(err, valid);
  }
  c.options.create_if_missing = writes && !c.no_create;
  auto opened = Store::Open(c.location, c.options);
  if (!opened.ok()) {
    if (name == "delete" && c.ignore_missing && opened.status().IsNotFound()) return kExitOk;
    if (opened.status().IsNotFound())
      return Fail(err, Status::NotFound(opened.status().message() +
                                        (writes ? "; --no-create refuses to make one"
                                                : "; check --store (put, import and txn create "
                                                  "a store)")));
    return Fail(err, opened.status());
  }
  std::unique_ptr<Store> store = std::move(*opened);
  if (name == "txn") return CmdTxn(*store, in, out, err, c.txn_options);
  if (name == "lock")
    return CmdLock(*store, c.lock_name, c.lock, c.command, c.conflict_exit_code, err);
  if (name == "leader")
    return CmdLeader(*store, c.lock_name, c.leader, c.leader_timeout, c.command,
                     c.conflict_exit_code, err);
  if (name == "queue") return CmdQueue(*store, c.queue, in, out, err);
  if (name == "counter")
    return CmdCounter(*store, c.counter_action, c.lock_name, c.delta, c.shards, out, err);
  if (name == "recover") {
    auto report = store->RecoverAndReport(c.discard_damaged);
    if (!report.ok()) return Fail(err, report.status());
    out << RecoveryToJson(*report).dump() << "\n";
    return kExitOk;
  }
  auto table = store->OpenTable(c.table);
  if (!table.ok()) return Fail(err, table.status());
  if (name == "put") return CmdPut(*table, c.mode, c.if_match, in, out, err);
  if (name == "query") return CmdQuery(*table, c.query, c.limit, c.format, out, err);
  c.bulk.progress = &err == &std::cerr && isatty(STDERR_FILENO);
  if (name == "export") return CmdExport(*table, c.query, c.bulk, out, err);
  if (name == "import") return CmdImport(*table, c.bulk, in, err);
  if (name == "locate") return CmdLocate(*store, *table, c.pk, c.optional_rk, out, err);
  if (name == "get") return CmdGet(*table, c.pk, c.rk, c.format, out, err);
  Status s = table->Delete(c.pk, c.rk, c.if_match.value_or("*"));  // delete
  if (s.IsNotFound() && c.ignore_missing) return kExitOk;
  if (!s.ok()) return Fail(err, s);
  return kExitOk;
}

}  // namespace

int Fail(std::ostream& err, const Status& s) {
  err << "blobtable: error: " << s.ToString() << "\n";
  return ExitCodeFor(s);
}

void WarnIfStale(bool stale, std::ostream& err) {
  if (stale)
    err << "blobtable: warning: stale: answered from the local cache without reaching storage "
           "(offline, or storage unreachable); it may be out of date\n";
}

int ExitCodeFor(const Status& s) {
  switch (s.code()) {
    case Code::kOk: return kExitOk;
    case Code::kInvalidArgument: return kExitInvalid;
    case Code::kNotFound: return kExitNotFound;
    case Code::kConflict: return kExitConflict;
    case Code::kLockTimeout:
    case Code::kBusy: return kExitLockTimeout;
    case Code::kUnavailable: return kExitUnavailable;
    case Code::kOutcomeUnknown: return kExitOutcomeUnknown;
    default: return kExitOther;
  }
}

int Run(int argc, const char* const* argv, std::istream& in, std::ostream& out, std::ostream& err) {
  try {
    CLI::App app(kDescription, "blobtable");
    Command c;
    DefineCommands(app, c);
    try {
      app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      if (e.get_exit_code() == 0) {  // --help, --version
        app.exit(e, out, err);
        return kExitOk;
      }
      err << "blobtable: " << e.what() << "\nRun 'blobtable --help' for usage.\n";
      return kExitInvalid;
    }
    return Execute(app.get_subcommands().front()->get_name(), c, in, out, err);
  } catch (const UsageError& e) {
    err << "blobtable: " << e.message << "\nRun 'blobtable --help' for usage.\n";
    return kExitInvalid;
  } catch (const std::exception& e) {
    err << "blobtable: internal error: " << e.what() << "\n";
    return kExitOther;
  }
}

}  // namespace blobtable::cli
