// SPDX-License-Identifier: Apache-2.0
// The blobtable CLI's frame: its help, the options every command shares, the
// exit codes; the commands themselves are in tools/cli/.
#include "tools/cli.h"

#include <algorithm>
#include <map>
#include <chrono>
#include <exception>
#include <iostream>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "tools/cli/command.h"
#include "tools/cli/registry.h"
#include "tools/cli/suggest.h"
#include "tools/help_format.h"
#include "tools/metrics_output.h"
#include "tools/open_store.h"
#include "util/ascii.h"
#include "util/utf8.h"

namespace blobtable::cli {
namespace {

// Paragraphs of one line each: the help is wrapped to the terminal
// (tools/help_format.h).
constexpr char kDescription[] =
    "blobtable: an embedded table store on blob storage.\n\n"
    "Entities are JSON in the Azure Tables form: \"PartitionKey\", \"RowKey\", \"Timestamp\", "
    "\"odata.etag\", and properties, with \"Name@odata.type\" annotations for Edm.Double (always "
    "printed), Edm.Int64 (a string), Edm.Binary (base64), Edm.Guid and Edm.DateTime (on input, "
    "Int32, Double, Boolean and String may follow from the JSON value). Options go before or "
    "after the command.";

constexpr char kFooter[] =
    "Exit codes: 0 ok, 2 invalid input (usage, key, JSON, size), 3 not found, 4 conflict (ETag "
    "mismatch or already exists), 5 lock not acquired in time, 6 storage unreachable, 7 outcome "
    "unknown (a commit may or may not have happened: read its entities or run `recover` before "
    "retrying), 8 damaged blobs found by check, 9 no visible item (queue take, queue run), 1 "
    "anything else. Errors go to stderr.";

// Declares the app and the options every command shares but the cache's on
// `app`, writing into `g`.
void DefineGlobalOptions(CLI::App& app, GlobalOptions& g) {
  app.set_help_flag("-h,--help", "this help");
  app.set_version_flag("--version", "blobtable " BLOBTABLE_VERSION);
  app.footer(kFooter);
  app.require_subcommand(1, 1);
  app.fallthrough();  // global options may follow the command
  app.add_option("--store", g.location,
                 "a directory (the embedded store: put, import and txn create it if missing, "
                 "other commands exit 3 \"no store at\"), or an Azure Storage "
                 "connection string (\"UseDevelopmentStorage=true\" for Azurite on "
                 "127.0.0.1:10000; add \"HttpTransport=cpprest\" for the second HTTP transport). "
                 "Default: $BLOBTABLE_STORE, else $AZURE_STORAGE_CONNECTION_STRING, else "
                 "./blobtable-data");
  app.add_flag("--no-create", g.no_create,
               "put, import and txn: refuse (exit 3) instead of creating a store or container "
               "that does not exist");
  app.add_flag("--missing-table-ok", g.missing_table_ok,
               "a table that holds no entity reads as empty (query, export, count: no rows, "
               "exit 0) and drops as 0 entities, instead of exit 3 naming it");
  app.add_option("--container", g.store.container,
                 "the container holding the tables (default: blobtable)");
  app.add_option_function<double>(
         "--lock-timeout",
         [&g](double seconds) {
           auto ms = std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
           g.store.busy_timeout = ms;
           g.txn.lock_timeout = ms;
         },
         "SECONDS to wait for a lock or an entity leased by a transaction in progress before "
         "exit code 5 (default 30 for transactions, 70 for single writes)")
      ->check(AtLeast(0));
  app.add_flag("-v,--verbose", g.verbose,
               "log every storage request to stderr (method, blob, status, error code, "
               "milliseconds, attempt; never keys or signatures); a revalidated cached entity "
               "shows as 304");
  app.add_option_function<double>(
         "--slow-calls",
         [&g](double ms) {
           g.store.slow_calls.threshold = std::chrono::milliseconds(static_cast<int64_t>(ms));
         },
         "MS: describe each call of the store that took at least this long on stderr, with where "
         "its time went (requests, retries, backoff, lock and finishing waits); 0: every call")
      ->check(AtLeast(0));
  app.add_flag("--metrics", g.metrics,
               "when the command ends, write the store's metrics (its calls, requests, retries, "
               "cache, transactions; OpenMetrics text, ending \"# EOF\") to stderr; a "
               "running command also writes them when sent SIGUSR1");
}

// The local cache's options (Azure stores only; docs/cache.md#the-local-cache).
void DefineCacheOptions(CLI::App& app, GlobalOptions& g) {
  app.add_option("--cache", g.store.cache.directory,
                 "DIR of the local cache of an Azure store (default: $XDG_CACHE_HOME/blobtable, "
                 "else ~/.cache/blobtable)");
  app.add_flag_callback(
      "--no-cache", [&g] { g.store.cache.enabled = false; },
      "read an Azure store without the local cache");
  app.add_option_function<double>(
         "--max-stale",
         [&g](double seconds) {
           g.store.cache.read_policy = ReadPolicy::MaxStale(
               std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000)));
         },
         "SECONDS: get and query answer from the cache without a request if storage confirmed "
         "the copy less than this long ago")
      ->check(AtLeast(0));
  app.add_flag_callback(
      "--offline", [&g] { g.store.cache.read_policy = ReadPolicy::Offline(); },
      "get and query never contact storage: cached copies (with a warning "
      "that they are stale), else not found (exit 3)");
}

// -v: the store's request log on `err`, a whole line at a time (requests
// go out from several threads at once: a query's reads, import's writes).
void LogRequestsTo(std::ostream& err, StoreOptions& options) {
  auto mu = std::make_shared<std::mutex>();
  options.request_log = [mu, &err](const std::string& line) {
    std::lock_guard<std::mutex> lock(*mu);
    err << line << "\n";
  };
}

// --slow-calls: the slow-call log on `err`, a whole line at a time.
void LogSlowCallsTo(std::ostream& err, StoreOptions& options) {
  auto mu = std::make_shared<std::mutex>();
  options.slow_calls.sink = [mu, &err](const std::string& line) {
    std::lock_guard<std::mutex> lock(*mu);
    err << line << "\n";
  };
}

// Every command's name, and every long option's (without "--"), of `app`
// and the commands under it.
void CollectNames(const CLI::App& app, std::vector<std::string>& commands,
                  std::vector<std::string>& options) {
  for (const CLI::Option* o : app.get_options())
    for (const std::string& n : o->get_lnames()) options.push_back(n);
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    commands.push_back(sub->get_name());
    CollectNames(*sub, commands, options);
  }
}

// "did you mean" for a command line the parser refused: the first word
// that is no command and looks like one mistyped, or an option no command
// has that looks like one that does. Empty if nothing is near.
std::string DidYouMean(const CLI::App& app, int argc, const char* const* argv) {
  std::vector<std::string> commands, options;
  CollectNames(app, commands, options);
  bool command_seen = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--") break;  // the rest is a command to run (lock, leader)
    if (arg.starts_with("--")) {
      const std::string name(arg.substr(
          2, arg.find('=') == std::string_view::npos ? std::string_view::npos : arg.find('=') - 2));
      if (std::find(options.begin(), options.end(), name) != options.end()) continue;
      if (std::string near = Nearest(name, options); !near.empty())
        return "unknown option '--" + name + "'; did you mean '--" + near + "'?";
      continue;
    }
    if (command_seen || arg.starts_with("-")) continue;
    if (std::find(commands.begin(), commands.end(), arg) != commands.end()) {
      command_seen = true;
      continue;
    }
    if (std::string near = Nearest(arg, commands); !near.empty())
      return "unknown command '" + std::string(arg) + "'; did you mean '" + near + "'?";
  }
  return "";
}

// The store this run opens, as its messages name it: "account 'A' at
// ENDPOINT" for a connection string (never its key or signature); empty
// for a directory.
std::string g_store_named;

std::string StoreNamed(const std::string& location) {
  std::map<std::string, std::string> parts;
  for (size_t start = 0; start < location.size();) {
    size_t end = location.find(';', start);
    if (end == std::string::npos) end = location.size();
    const std::string part = location.substr(start, end - start);
    if (const size_t eq = part.find('='); eq != std::string::npos)
      parts[internal::AsciiLower(part.substr(0, eq))] = part.substr(eq + 1);
    start = end + 1;
  }
  if (parts.empty()) return "";
  std::string account = parts["accountname"];
  if (account.empty() && parts["usedevelopmentstorage"] == "true") account = "devstoreaccount1";
  std::string named = account.empty() ? "" : "account '" + account + "'";
  // The endpoint without what can be secret in a URL: user:password@ and
  // a query (a pasted SAS URL's signature).
  std::string endpoint = parts["blobendpoint"];
  endpoint = endpoint.substr(0, endpoint.find_first_of("?#"));
  if (const size_t scheme = endpoint.find("://"); scheme != std::string::npos)
    if (const size_t at = endpoint.find('@', scheme + 3);
        at != std::string::npos && at < endpoint.find('/', scheme + 3))
      endpoint.erase(scheme + 3, at + 1 - (scheme + 3));
  if (!endpoint.empty()) named += (named.empty() ? "" : " ") + ("at " + endpoint);
  return named;
}

// Runs the parsed command.
int Execute(Command& command, GlobalOptions& g, std::istream& in, std::ostream& out,
            std::ostream& err) {
  if (g.verbose) LogRequestsTo(err, g.store);
  if (g.store.slow_calls.threshold) LogSlowCallsTo(err, g.store);
  g_store_named = StoreNamed(g.location);
  Context context{g, command.Writes(), in, out, err};
  ForgetStores();
  const int rc = command.Run(context);
  out.flush();
  if (g.metrics) PrintMetrics(err);
  if (!out && rc == kExitOk)  // what it printed is lost: never "ok"
    return Fail(err, Status::IOError(std::string(command.name()) + ": cannot write the output"));
  return rc;
}

}  // namespace

std::string CommandFooter(const char* example) {
  std::string footer;
  if (example != nullptr) footer = std::string("Example:\n  ") + example + "\n\n";
  return footer +
         "Options every command takes (before or after it; `blobtable --help` says more):\n"
         "  --store LOCATION (a directory or a connection string)\n"
         "  --container NAME  --no-create  --lock-timeout SECONDS  -v\n"
         "  --metrics  --slow-calls MS\n"
         "  --cache DIR  --no-cache  --max-stale SECONDS  --offline";
}

std::string Printable(std::string_view text) { return internal::EscapedForMessage(text); }

int Fail(std::ostream& err, const Status& s) {
  const int code = ExitCodeFor(s);
  err << "blobtable: error: " << Printable(s.ToString());
  if ((code == kExitAuthentication || code == kExitNoStore) && !g_store_named.empty())
    err << " (" << g_store_named << ")";
  err << "\n";
  return code;
}

void WarnIfStale(bool stale, std::ostream& err) {
  if (stale)
    err << "blobtable: warning: stale: answered from the local cache without reaching storage "
           "(offline, or storage unreachable); it may be out of date\n";
}

int ExitCodeFor(const Status& s) {
  switch (s.code()) {
    case Code::kOk: return kExitOk;
    case Code::kInvalidArgument:
      if (s.storage_code() == kStoreNotFound) return kExitNoStore;
      return s.http_status() == 401 || s.http_status() == 403 ? kExitAuthentication : kExitInvalid;
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
    app.formatter(std::make_shared<WrappingFormatter>(HelpWidth()));  // before the commands
    GlobalOptions g;
    g.location = DefaultLocation();
    DefineGlobalOptions(app, g);
    DefineCacheOptions(app, g);
    std::vector<std::unique_ptr<Command>> commands = Commands();
    for (const auto& command : commands) command->Define(app);
    try {
      app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      if (e.get_exit_code() == 0) {  // --help, --version
        app.exit(e, out, err);
        return kExitOk;
      }
      const std::string hint = DidYouMean(app, argc, argv);
      err << "blobtable: " << (hint.empty() ? std::string(e.what()) : hint)
          << "\nRun 'blobtable --help' for usage.\n";
      return kExitInvalid;
    }
    const std::string name = app.get_subcommands().front()->get_name();
    for (const auto& command : commands)
      if (command->name() == name) return Execute(*command, g, in, out, err);
    return kExitOther;  // not reached: the parser takes only the commands
  } catch (const UsageError& e) {
    err << "blobtable: " << e.message << "\nRun 'blobtable --help' for usage.\n";
    return kExitInvalid;
  } catch (const std::exception& e) {
    err << "blobtable: internal error: " << e.what() << "\n";
    return kExitOther;
  }
}

}  // namespace blobtable::cli
