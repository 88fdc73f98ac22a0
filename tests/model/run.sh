#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds and runs the Spin configurations of the commit-protocol model
# (tests/model/commit.pml; see tests/model/README.md).
#
#   tests/model/run.sh ci     the configurations that fit in about a minute and a half (one core)
#   tests/model/run.sh full   all of them
#   tests/model/run.sh NAME.. only the named ones
#   KEEP_TRAILS=1 ...         copy each failing run's trail and replay to tests/model/trails/
#
# Each configuration has an expectation: PASS (the whole state space explored,
# no error) or FAIL (a counterexample found: today's holes, and the findings
# the README lists). Exits non-zero if any configuration does not meet it.
# Needs spin and a C compiler; works in a temp dir.
set -u
here="$(cd "$(dirname "$0")" && pwd)"
model="$here/commit.pml"
mode="${1:-ci}"

# name | expect | tier | -D flags of spin | pan compile flags
CONFIGS=(
  # today's design: each hole alone (the other three paths replaced by their fixes)
  "today-hole1|FAIL|full|-DTODAY -DONLY=1 -DT1ENTS=3 -DT2ENTS=1 -DWX=1 -DRX=1 -DMAXT=0|-DCOLLAPSE -DREVERSE -O0"
  "today-hole2|FAIL|ci|-DTODAY -DONLY=2 -DT1ENTS=1 -DWX=0 -DREC=1 -DMAXT=2|-DCOLLAPSE -O0"
  "today-hole2-stall|FAIL|ci|-DTODAY -DONLY=2 -DT1ENTS=1 -DWX=0 -DREC=1 -DMAXT=2 -DW_AFTER_LEASE|-DCOLLAPSE -O0"
  "today-hole3|FAIL|full|-DTODAY -DONLY=3 -DT1ENTS=3 -DT2ENTS=2 -DREC=1 -DMAXT=0|-DCOLLAPSE -O0"
  "today-hole4|FAIL|full|-DTODAY -DONLY=4 -DT1ENTS=3 -DT2ENTS=1 -DREC=1 -DMAXT=0|-DCOLLAPSE -O0"
  "today-p1-strict|FAIL|full|-DTODAY -DONLY=9 -DP1STRICT -DT1ENTS=1 -DT2ENTS=1 -DREC=1 -DMAXT=0|-DCOLLAPSE -O0"
  "today-all|FAIL|full|-DTODAY -DT1ENTS=3 -DT2ENTS=1 -DWX=1 -DRX=1 -DREC=1 -DMAXT=0|-DCOLLAPSE -O0"
  # the new design (final form): the same shapes, clean
  "new-shape1|PASS|full|-DT1ENTS=3 -DT2ENTS=1 -DWX=1 -DRX=1 -DMAXT=0|-DCOLLAPSE -O2"
  "new-shape2|PASS|ci|-DT1ENTS=1 -DWX=0 -DREC=1 -DMAXT=2|-DCOLLAPSE -O0"
  "new-shape2-stall|PASS|ci|-DT1ENTS=1 -DWX=0 -DREC=1 -DMAXT=2 -DW_AFTER_LEASE|-DCOLLAPSE -O0"
  "new-shape3|PASS|full|-DT1ENTS=3 -DT2ENTS=2 -DREC=1 -DMAXT=0|-DCOLLAPSE -O0"
  "new-shape4|PASS|full|-DT1ENTS=3 -DT2ENTS=1 -DREC=1 -DMAXT=0|-DCOLLAPSE -O0"
  "new-kill|PASS|full|-DT1ENTS=3 -DWX=1 -DREC=1 -DKILLS=1 -DMAXT=2|-DCOLLAPSE -O0"
  "new-lost|PASS|full|-DT1ENTS=3 -DWX=1 -DREC=1 -DLOST=1 -DMAXT=2|-DCOLLAPSE -O2"
  "new-read|PASS|full|-DT1ENTS=1 -DWX=0 -DRX=0 -DREC=1 -DMAXT=2|-DCOLLAPSE -O2"
  "new-retry|PASS|full|-DT1ENTS=1 -DT2ENTS=1 -DRETRY=1 -DMAXT=0|-DCOLLAPSE -O2"
  # the final design on the shapes of the previous design's findings: the regressions
  "new-round1any|PASS|ci|-DT1ENTS=3 -DWX=0 -DREC=1 -DMAXT=1 -DROUND1ANY|-DCOLLAPSE -O0"
  "new-round1any-t2|PASS|full|-DT1ENTS=3 -DWX=0 -DREC=2 -DMAXT=2 -DROUND1ANY|-DCOLLAPSE -O2"
  "new-late-renewal-norec|PASS|full|-DT1ENTS=1 -DT2ENTS=3 -DREC=0 -DMAXT=2|-DCOLLAPSE -O2"
  "new-late-renewal-t1|PASS|full|-DT1ENTS=1 -DT2ENTS=3 -DREC=1 -DMAXT=1|-DCOLLAPSE -O2"
  "new-late-renewal|PASS|full|-DT1ENTS=1 -DT2ENTS=3 -DREC=1 -DMAXT=2|-DCOLLAPSE -O2"
  # a stripe busy in round 1 (both slots draw the same stripe): DropRecord, wait, the record again
  "new-stripe-busy-t1|PASS|full|-DSHARED_STRIPE -DT1ENTS=1 -DT2ENTS=1 -DREC=1 -DMAXT=1|-DCOLLAPSE -O2"
  "new-stripe-busy-norec|PASS|full|-DSHARED_STRIPE -DT1ENTS=1 -DT2ENTS=1 -DREC=0 -DMAXT=2|-DCOLLAPSE -O2"
  "new-stripe-busy|PASS|full|-DSHARED_STRIPE -DT1ENTS=1 -DT2ENTS=1 -DREC=1 -DMAXT=2|-DCOLLAPSE -O2"
  # the embedded atomic batch beside the protocol (a store of each kind on one directory)
  "new-batch-small|PASS|ci|-DT1ENTS=1 -DAX=1 -DREC=1 -DMAXT=1|-DCOLLAPSE -O0"
  "new-batch|PASS|full|-DT1ENTS=3 -DAX=3 -DRX=0 -DREC=1 -DMAXT=1|-DCOLLAPSE -O2"
  "new-batch-read|PASS|full|-DT1ENTS=1 -DAX=1 -DRX=0 -DREC=1 -DMAXT=2|-DCOLLAPSE -O2"
  # a planted bug (the batch takes an intent for its previous version and writes over leases): found
  "plant-batch-blind|FAIL|ci|-DPLANT_BATCH_BLIND -DT1ENTS=1 -DAX=1 -DREC=1 -DMAXT=1|-DCOLLAPSE -O0"
  # finding 3: Recover looking at an aborted record's entities before its stripes (-DBLOBS_FIRST)
  "blobsfirst-kill|FAIL|ci|-DBLOBS_FIRST -DT1ENTS=3 -DWX=1 -DREC=1 -DKILLS=1 -DMAXT=2|-DCOLLAPSE -O0"
  # the allowed liveness window (pending record landed before the stripe lease), flagged
  "new-window|FAIL|ci|-DT1ENTS=3 -DWX=0 -DREC=1 -DMAXT=1 -DROUND1ANY -DSTRICT_LIVE|-DCOLLAPSE -O0"
  # the previous new design (-DR281): its two findings, still found
  "r281-round1any|FAIL|full|-DR281 -DT1ENTS=3 -DWX=0 -DREC=1 -DMAXT=1 -DROUND1ANY|-DCOLLAPSE -O0"
  "r281-late-renewal|FAIL|full|-DR281 -DT1ENTS=1 -DT2ENTS=3 -DREC=1 -DMAXT=2|-DCOLLAPSE -O2"
)

command -v spin >/dev/null || { echo "spin not found" >&2; exit 2; }
work="$(mktemp -d "${TMPDIR:-/tmp}/blobtable-model.XXXXXX")"
trap 'rm -rf "$work"' EXIT

JOBS="${JOBS:-2}"   # configurations run side by side (this machine has 2 cores)

run_one() {  # name expect dflags cflags -> $work/$name.result
  local name=$1 expect=$2 dflags=$3 cflags=$4
  local d="$work/$name" result=ERROR design=new
  case "$dflags" in *-DTODAY*) design=today ;; *-DR281*) design=r281 ;; esac
  mkdir -p "$d"
  cp "$model" "$d/commit.pml"
  local start end
  start=$(date +%s.%N)
  if (cd "$d" && spin -a $dflags commit.pml >spin.out 2>&1 &&
      gcc -DSAFETY -DMEMLIM=16000 $cflags -o pan pan.c >gcc.out 2>&1); then
    (cd "$d" && ./pan -m1000000 >pan.out 2>&1)
    if grep -q "errors: 0" "$d/pan.out" && ! grep -q "max search depth too small" "$d/pan.out" &&
       ! grep -q "out of memory" "$d/pan.out" && ! grep -q "MEMLIM" "$d/pan.out"; then
      result=PASS
    elif grep -qE "errors: [1-9]" "$d/pan.out"; then
      result=FAIL
    fi
  fi
  end=$(date +%s.%N)
  local states depth mem secs
  states=$(awk '/states, stored/ {print $1; exit}' "$d/pan.out" 2>/dev/null)
  depth=$(sed -n 's/.*depth reached \([0-9]*\).*/\1/p' "$d/pan.out" 2>/dev/null | head -1)
  mem=$(awk '/total actual memory usage/ {print $1; exit}' "$d/pan.out" 2>/dev/null)
  secs=$(echo "$end - $start" | bc)
  {
    printf '%-22s %-6s %-7s %-6s %12s %7s %9s %8.1f\n' "$name" "$design" "$result" "$expect" \
      "${states:-?}" "${depth:-?}" "${mem:-?}" "$secs"
    awk '/transitions \(= stored\+matched\)/ {print "    transitions: " $1; exit}' "$d/pan.out" 2>/dev/null
    if [ "$result" = FAIL ]; then
      grep -m1 "assertion violated\|invalid end state" "$d/pan.out" | sed 's/^/    /'
    fi
  } >"$d.result"
  if [ "$result" = FAIL ] && [ "${KEEP_TRAILS:-0}" = 1 ]; then
    mkdir -p "$here/trails"
    cp "$d/commit.pml.trail" "$here/trails/$name.trail"
    (cd "$d" && spin -t $dflags commit.pml 2>&1 |
       grep -E '^ *@|\] is |assert' >"$here/trails/$name.txt")
    (cd "$d" && spin -t -p $dflags commit.pml >"$here/trails/$name.replay.txt" 2>&1)
  fi
  [ "$result" = "$expect" ]
}

selected=()
for entry in "${CONFIGS[@]}"; do
  IFS='|' read -r name expect tier dflags cflags <<<"$entry"
  case "$mode" in
    ci) [ "$tier" = ci ] || continue ;;
    full) ;;
    *) case " $* " in *" $name "*) ;; *) continue ;; esac ;;
  esac
  selected+=("$entry")
  while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n || true; done
  run_one "$name" "$expect" "$dflags" "$cflags" &
done
wait

passed=0
failed=0
printf '%-22s %-6s %-7s %-6s %12s %7s %9s %8s\n' name design result expect states depth memMB seconds
for entry in "${selected[@]}"; do
  IFS='|' read -r name expect tier dflags cflags <<<"$entry"
  cat "$work/$name.result"
  if head -1 "$work/$name.result" | awk -v e="$expect" '{exit !($3 == e)}'; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
  fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
