#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Scans what the test suites printed (CTest's LastTest.log files, given as
# arguments) for secrets: the account key the tests use (Azurite's, the
# stand-in for a real one), a Shared Key Authorization header, a SAS
# signature. Prints "secret scan: ok (N bytes)", or the numbers of the lines
# that hold one (never the lines themselves) and fails.
# SECURITY.md#what-is-checked.
set -euo pipefail
status=0
bytes=0
for log in "$@"; do
  [ -f "$log" ] || { echo "secret scan: no $log"; exit 2; }
  bytes=$((bytes + $(wc -c < "$log")))
  # Key material, a signed header, a signature in a URL or a token.
  lines=$(grep -a -n -E 'Eby8vdM02xNOcqFlqUwJPLlm|SharedKey [A-Za-z0-9]+:|Authorization:|[?&;]sig=[A-Za-z0-9%+/=]{8,}' "$log" | cut -d: -f1 | tr '\n' ' ' || true)
  if [ -n "$lines" ]; then
    echo "secret scan: secrets in $log, lines: $lines"
    status=1
  fi
done
[ "$status" -eq 0 ] && echo "secret scan: ok ($bytes bytes of test output)"
exit "$status"
