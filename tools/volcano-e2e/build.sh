#!/bin/bash
# Builds Volcano v1.15.1's e2e suites and vcctl, unmodified, into ~/.cache/volcanic/volcano-e2e.
#   tools/volcano-e2e/build.sh GIT_DIR [SUITE...]
# GIT_DIR: a clone of volcano-sh/volcano holding tag v1.15.1 (the search tools' `fetch` gives one).
# SUITE: jobp jobseq schedulingbase schedulingaction admission schedulinggates vcctl hypernode
# gangevict (default: all); binaries already built are kept (FORCE=1 rebuilds them).
# The tag's go.mod points volcano.sh/apis at its staging directory: nothing else to fetch.
set -eu
GIT_DIR=${1:?usage: build.sh GIT_DIR [SUITE...]}
shift
SUITES=${*:-jobp jobseq schedulingbase schedulingaction admission schedulinggates vcctl hypernode gangevict}
SRC=${VOLCANO_SRC:-$HOME/.cache/volcanic/volcano-src}
OUT=${VOLCANO_E2E_BIN:-$HOME/.cache/volcanic/volcano-e2e}
mkdir -p "$SRC" "$OUT"
[ -f "$SRC/go.mod" ] || git --git-dir="$GIT_DIR" archive v1.15.1 | tar -x -C "$SRC"
cd "$SRC"
export GOMAXPROCS=1 GOFLAGS="-mod=mod -buildvcs=false"
start=$(date +%s)
[ -x "$OUT/vcctl" ] && [ -z "${FORCE:-}" ] || nice -n 19 go build -p 1 -o "$OUT/vcctl" ./cmd/cli
for s in $SUITES; do
  [ -x "$OUT/$s.test" ] && [ -z "${FORCE:-}" ] && { echo "$s: $OUT/$s.test exists"; continue; }
  nice -n 19 go test -p 1 -c -o "$OUT/$s.test" "./test/e2e/$s"
  echo "$s built at $(( $(date +%s) - start ))s"
done
