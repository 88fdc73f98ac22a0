// SPDX-License-Identifier: Apache-2.0
// A command of the blobtable CLI: its name, its help, whether it writes, its
// options (bound to a small struct of its own) and its run. Each command is
// one file in tools/cli/, which makes it with MakeCommand;
// tools/cli/registry.cc lists them in the order `blobtable --help` shows.
#ifndef BLOBTABLE_TOOLS_CLI_COMMAND_H_
#define BLOBTABLE_TOOLS_CLI_COMMAND_H_

#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "blobtable/store.h"
#include "blobtable/txn.h"
#include "tools/bulk.h"

namespace blobtable::cli {

// The options every command shares (given before or after it; tools/cli.cc
// declares them).
struct GlobalOptions {
  std::string location;    // --store (tools/open_store.h: DefaultLocation)
  StoreOptions store;      // --container, --lock-timeout, the cache's flags, -v's request log
  TransactionOptions txn;  // --lock-timeout
  bool verbose = false;    // -v
  bool metrics = false;    // --metrics (tools/metrics_output.h)
  bool no_create = false;  // --no-create
  bool missing_table_ok = false;  // --missing-table-ok (tools/open_store.h: TableMustExist)
};

// A check for a numeric option whose message says the real range (CLI11's
// own print the double's limits: "Value 0 not in range 0.000000 to 1.79e308").
inline CLI::Validator AtLeast(double min) {
  return CLI::Validator(
      [min](std::string& v) -> std::string {
        double d = 0;
        if (CLI::detail::lexical_cast(v, d) && d >= min) return "";
        return "must be " + std::to_string(static_cast<long long>(min)) + " or more (got " + v +
               ")";
      },
      "N >= " + std::to_string(static_cast<long long>(min)));
}

// What a command runs with.
struct Context {
  GlobalOptions& global;
  // Whether the command writes (Command::Writes): only writes make a store
  // that is missing (tools/open_store.h).
  bool writes = false;
  std::istream& in;
  std::ostream& out;
  std::ostream& err;
};

// A command line the parser took that the command refuses: exit 2, with a
// pointer to --help.
struct UsageError {
  std::string message;
};

// One command, as the registry holds it.
class Command {
 public:
  virtual ~Command() = default;
  virtual const char* name() const = 0;
  // Adds the command to `app`, its options bound to this object.
  virtual void Define(CLI::App& app) = 0;
  // Whether the command as parsed writes.
  virtual bool Writes() const = 0;
  // Runs the command as parsed; its exit code.
  virtual int Run(Context& context) = 0;
};

// What every command's --help ends with: its example (if it has one), and
// the options every command takes (tools/cli.cc).
std::string CommandFooter(const char* example);

// A command, described by its file.
template <typename Options>
struct CommandSpec {
  const char* name;
  const char* help;  // what `--help` says of it
  // A command line that uses it, shown by its --help.
  const char* example = nullptr;
  // Whether it writes: always or never, or as its options say (a command
  // whose subcommands differ).
  bool writes = false;
  bool (*writes_if)(const Options&) = nullptr;
  // Declares its options (and subcommands) on `command`, bound to `options`.
  void (*define)(CLI::App& command, Options& options) = nullptr;
  int (*run)(Options& options, Context& context) = nullptr;
};

template <typename Options>
class CommandOf final : public Command {
 public:
  explicit CommandOf(const CommandSpec<Options>& spec) : spec_(spec) {}
  const char* name() const override { return spec_.name; }
  void Define(CLI::App& app) override {
    CLI::App* command = app.add_subcommand(spec_.name, spec_.help);
    command->footer(CommandFooter(spec_.example));
    if (spec_.define != nullptr) spec_.define(*command, options_);
  }
  bool Writes() const override {
    return spec_.writes_if != nullptr ? spec_.writes_if(options_) : spec_.writes;
  }
  int Run(Context& context) override { return spec_.run(options_, context); }

 private:
  CommandSpec<Options> spec_;
  Options options_;
};

template <typename Options>
std::unique_ptr<Command> MakeCommand(const CommandSpec<Options>& spec) {
  return std::make_unique<CommandOf<Options>>(spec);
}

// The options that choose rows, on every command that reads or changes a
// range (query, export, count, delete): --pk, --rk-from, --rk-to,
// --rk-prefix, --filter, bound to `q` (tools/cli/selection.cc).
void DefineSelection(CLI::App& command, QueryOptions& q);
// Whether any of them was given.
bool SelectsRows(const QueryOptions& q);

// `query --index NAME --eq A=V... --from B=V --to B=V` as given: each value
// NAME[:TYPE]=VALUE, as `put` takes properties.
struct IndexArgs {
  std::string index;
  std::vector<std::string> equal;
  std::optional<std::string> from, to;
};
// The index read they ask for, checked against the table's definition of
// the index: each value names the index's property at its place (--eq the
// first ones in order, --from/--to the next). InvalidArgument saying what
// is wrong (tools/cli/index.cc).
Result<IndexRead> IndexReadOf(const Store& store, const std::string& table, const IndexArgs& args);

// How `get` and `query` may print entities (--format; tools/entity_output.h).
inline CLI::IsMember FormatNames() {
  return CLI::IsMember({"jsonl", "json", "table", "csv", "tsv"});
}

}  // namespace blobtable::cli

#endif  // BLOBTABLE_TOOLS_CLI_COMMAND_H_
