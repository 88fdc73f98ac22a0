// SPDX-License-Identifier: Apache-2.0
// The blobtable command-line tool (see `blobtable --help`).
#ifndef BLOBTABLE_TOOLS_CLI_H_
#define BLOBTABLE_TOOLS_CLI_H_

#include <iosfwd>
#include <string>
#include <string_view>

#include "blobtable/status.h"

namespace blobtable::cli {

// Exit codes, the same for every command.
enum ExitCode : int {
  kExitOk = 0,
  kExitOther = 1,
  kExitInvalid = 2,  // usage, key, JSON, size
  kExitNotFound = 3,
  kExitConflict = 4,         // ETag mismatch or already exists
  kExitLockTimeout = 5,      // lock not acquired in time (or entity locked)
  kExitUnavailable = 6,      // storage unreachable
  kExitOutcomeUnknown = 7,   // a commit may or may not have happened: settle before retrying
  kExitDamaged = 8,          // check: the store holds damaged blobs
  kExitQueueEmpty = 9,       // queue take/run: no visible item
  kExitAuthentication = 10,  // storage refused the credentials (HTTP 401/403)
  kExitNoStore = 11,         // no store at the endpoint (not Azure Storage, or no such account)
};

int ExitCodeFor(const Status& status);
// `text` as a terminal can show it (util/utf8.h EscapedForMessage: control
// characters and bytes that are not UTF-8 escaped, \x1b, \xff); what a
// message quotes from the input.
std::string Printable(std::string_view text);
// Reports `status` on `err` ("blobtable: error: ..."), naming the account
// and endpoint when storage refused the credentials or is not there (never
// a key or a signature); its exit code.
int Fail(std::ostream& err, const Status& status);
// Warns on `err` when an answer came from the cache unconfirmed (exit 0).
void WarnIfStale(bool stale, std::ostream& err);

// Runs the CLI with the given arguments and streams; returns the exit code.
int Run(int argc, const char* const* argv, std::istream& in, std::ostream& out, std::ostream& err);

}  // namespace blobtable::cli

#endif  // BLOBTABLE_TOOLS_CLI_H_
