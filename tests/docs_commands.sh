#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs every ```sh block of README.md and docs/cli.md as a user pastes it, in
# order, in one scratch directory, so that the documented commands cannot
# drift from the tool. A block fails the run if any of its commands fails
# (set -e -o pipefail: a command documented to fail says so, `|| echo ...`).
#
# The store: $BLOBTABLE_STORE is STORE (a directory, or a connection string);
# $AZURE_STORAGE_CONNECTION_STRING is AZURITE (the test's Azurite). Before the
# blocks run, both hold the tables the examples name (orders, audit,
# scratch, users). What a block writes outside its directory is moved into
# the scratch directory: /backups, /tmp/quickstart, the completion
# directories; `npx azurite-blob` is the repository's Azurite on a free port.
# A block preceded by `<!-- not run: REASON -->` is listed with its reason
# and not run (installing packages, an Azure account, a build of the
# repository, a long stress run: each says which test covers it).
#
# Args: SOURCE_DIR BUILD_DIR STORE AZURITE FREE_PORT
set -uo pipefail
src="$1" build="$2" store="$3" azurite="$4" free_port="$5"
work="$(mktemp -d)"
cleanup() {
  pkill -f "blobPort $free_port" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/bin" "$work/run" "$work/backups" "$work/completions" "$work/fpath"
ln -s "$build/blobtable" "$work/bin/blobtable"
ln -s "$build" "$work/run/build"
export PATH="$work/bin:$PATH" HOME="$work" XDG_CACHE_HOME="$work/cache"
export BLOBTABLE_STORE="$store" AZURE_STORAGE_CONNECTION_STRING="$azurite"
cd "$work/run" || exit 1

# The tables the examples use, in the default store, ./data and Azurite.
seed() {
  local rows="" i
  for i in $(seq 1 30); do
    rows+="{\"PartitionKey\":\"c$((i % 3))\",\"RowKey\":\"o$i\",\"Total\":$i.5,\"Done\":$([ $((i % 2)) = 0 ] && echo true || echo false)}"$'\n'
  done
  blobtable "$@" import orders --quiet <<<"$rows" &&
    blobtable "$@" put audit --mode upsert a 1 what=seed >/dev/null &&
    blobtable "$@" put scratch --mode upsert s 1 >/dev/null &&
    blobtable "$@" put users --mode upsert u 1 email=a@x.org >/dev/null &&
    blobtable "$@" put users --mode upsert u 2 email=b@x.org >/dev/null
}
seed || { echo "docs commands: seeding the default store failed"; exit 1; }
seed --store ./data || { echo "docs commands: seeding ./data failed"; exit 1; }
if [ "$store" != "$azurite" ]; then
  seed --store "$azurite" || { echo "docs commands: seeding Azurite failed"; exit 1; }
fi

ran=0 skipped=0
for doc in README.md docs/cli.md; do
  blocks="$work/blocks/$(echo "$doc" | tr '/.' '__')"
  mkdir -p "$blocks"
  awk -v dir="$blocks" '
    /^<!-- not run: / { reason = $0; next }
    /^```sh$/ { n++; inside = 1; file = sprintf("%s/%03d.sh", dir, n);
                if (reason != "") print reason > (file ".skip"); reason = ""; next }
    /^```$/ && inside { inside = 0; next }
    inside { print > file; next }
    /[^ ]/ { reason = "" }
  ' "$src/$doc"
  for block in "$blocks"/*.sh; do
    [ -e "$block" ] || continue
    if [ -f "$block.skip" ]; then
      echo "docs commands: $doc block $(basename "$block" .sh): $(sed 's/<!-- not run: //; s/ -->//' "$block.skip")"
      skipped=$((skipped + 1))
      continue
    fi
    sed -i -e "s#/usr/share/bash-completion/completions/#$work/completions/#g" \
      -e "s#\"\${fpath\[1\]}\"#$work/fpath#g" \
      -e "s#/backups/#$work/backups/#g" \
      -e "s#/tmp/quickstart#$work/quickstart#g" \
      -e "s#npx azurite-blob#$src/node_modules/.bin/azurite-blob --blobHost 127.0.0.1#g" \
      -e "s#10123#$free_port#g" \
      -e "s#--blobPort $free_port &#--blobPort $free_port >/dev/null 2>\&1 \& until (exec 3<>/dev/tcp/127.0.0.1/$free_port) 2>/dev/null; do sleep 0.1; done#" \
      "$block"
    if ! out="$(bash -e -o pipefail "$block" 2>&1)"; then
      echo "docs commands: $doc block $(basename "$block" .sh) failed:"
      cat -n "$block"
      echo "--- its output:"
      echo "$out"
      exit 1
    fi
    ran=$((ran + 1))
  done
done
[ "$ran" -gt 0 ] || { echo "docs commands: no blocks found"; exit 1; }
# What `scripts/run-demo` runs after scripts/setup.
if ! out="$("$src/scripts/demo" 2>&1)"; then
  echo "docs commands: scripts/demo failed:"
  echo "$out"
  exit 1
fi
echo "docs commands: $ran blocks ran, $skipped not run (reasons above)"
