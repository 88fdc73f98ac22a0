// SPDX-License-Identifier: Apache-2.0
// `blobtable completion bash|zsh`: the script completes commands,
// subcommands, options and option values as the parser defines them, run by
// the shells themselves (bash and zsh, as a user's would).
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "tests/shell.h"
#include "tests/test_util.h"

namespace blobtable::testing {
namespace {

const std::string kCliPath = BLOBTABLE_CLI_PATH;

class CliCompletionTest : public ::testing::Test {
 protected:
  // What the script offers for `words` (the last one being completed), in
  // `shell`: COMPREPLY, space-separated.
  std::string Offered(const std::string& shell, const std::string& words) {
    const std::string script = dir_.path() + "/completion." + shell;
    ShellRun made = Shell(kCliPath + " completion " + shell);
    EXPECT_EQ(made.code, 0) << made.err;
    std::ofstream(script) << made.out;
    // As bash calls it, and as zsh's bashcompinit does (its sh emulation).
    const std::string call =
        "t() { COMP_WORDS=(\"$@\"); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )); " +
        std::string(shell == "zsh" ? "emulate -L sh; setopt kshglob noshglob braceexpand; " : "") +
        "_blobtable; echo \"${COMPREPLY[*]}\"; }; t " + words;
    const std::string program =
        shell == "zsh" ? "zsh -f -c " + Quote("autoload -U compinit && compinit -u -D; source " +
                                              Quote(script) + "; " + call)
                       : "bash -c " + Quote("source " + Quote(script) + "; " + call);
    ShellRun run = Shell(program);
    EXPECT_EQ(run.code, 0) << run.err;
    return run.out.substr(0, run.out.find('\n'));
  }
  TempDir dir_;
};

TEST_F(CliCompletionTest, BashCompletesCommandsSubcommandsOptionsAndValues) {
  EXPECT_EQ(Offered("bash", "blobtable qu"), "query queue");
  EXPECT_EQ(Offered("bash", "blobtable queue ta"), "take");
  EXPECT_EQ(Offered("bash", "blobtable queue \"\""), "put take done abandon extend run list");
  EXPECT_EQ(Offered("bash", "blobtable queue take --w"), "--wait");
  EXPECT_EQ(Offered("bash", "blobtable query orders --format \"\""), "jsonl json table csv tsv");
  EXPECT_EQ(Offered("bash", "blobtable put orders --mode up"), "upsert upsert-merge");
  EXPECT_EQ(Offered("bash", "blobtable get orders --sto"), "--store");  // the global options
  EXPECT_EQ(Offered("bash", "blobtable lock nightly -- l"), "");        // a command: the shell's
}

TEST_F(CliCompletionTest, ZshCompletesThroughBashcompinit) {
  // zsh filters the offered words by what is typed itself.
  EXPECT_EQ(Offered("zsh", "blobtable queue ta"), "put take done abandon extend run list");
  EXPECT_EQ(Offered("zsh", "blobtable query orders --format \"\""), "jsonl json table csv tsv");
  const std::string options = Offered("zsh", "blobtable queue take --w");
  EXPECT_NE(options.find("--wait"), std::string::npos) << options;
  EXPECT_EQ(options.find("put"), std::string::npos) << options;  // options only
}

}  // namespace
}  // namespace blobtable::testing
