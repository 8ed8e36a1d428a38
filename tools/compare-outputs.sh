#!/usr/bin/env bash
# Runs the cases of tools/compare-outputs.cases with a gpuscale and keeps what each prints (and
# the files it writes, less hidden ones such as a sweep's lock), so that a change meant to keep
# every prediction (a restructuring) can be checked byte for byte against the outputs before it:
#
#   tools/compare-outputs.sh record DIR [--quick]   run every case (or the quick ones) into DIR
#   tools/compare-outputs.sh diff BEFORE AFTER      compare two recorded folders, case by case
#   tools/compare-outputs.sh check                  record the quick cases into a temporary
#                                                    folder and compare them with tests/golden
#
# GPUSCALE names the binary (default: build/gpuscale of this tree). Host times (`wall_s`, "took",
# "simulated in") differ from run to run, and a sweep's run hashes from build to build (they hash
# the binary): these are blanked; everything else must be identical.
# tests/golden holds the quick cases' outputs as of the last change that meant to move a number:
# such a change records them again (`record tests/golden --quick`) and says so in its commit.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cases_file="$root/tools/compare-outputs.cases"

usage() { sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

# Blanks what varies between two runs of the same input: host times, run hashes, and where the
# tree is (a sweep writes its machines' paths, and hashes them into its study hash).
normalise() {
  sed -E -e 's/("wall_s": *)[0-9.e+-]+/\1_/g' \
         -e 's/(hash"?: *"?)[0-9a-f]{16}/\1_/g' -e 's/^([0-9]+),[0-9a-f]{16},/\1,_,/' \
         -e "s#$root/#ROOT/#g" \
         -e 's/(simulated in +)[0-9.]+ s host time/\1_ s host time/' \
         -e 's/ in [0-9.]+ s( host time)?/ in _ s\1/g' \
         -e 's/(took )[0-9.]+ s/\1_ s/g'
}

# record DIR QUICK: runs each case in a scratch folder of its own; a case's output is its stdout
# and exit status, then every file it wrote there, in name order.
record() {
  local dir="$1" quick="$2"
  local bin="${GPUSCALE:-$root/build/gpuscale}"
  [ -x "$bin" ] || { echo "compare-outputs: no gpuscale at $bin (build it first)" >&2; exit 1; }
  mkdir -p "$dir"
  local name speed command
  while IFS='|' read -r name speed command; do
    name="$(echo "$name" | xargs)"
    speed="$(echo "$speed" | xargs)"
    [ -z "$name" ] || [ "${name:0:1}" = "#" ] && continue
    [ "$quick" = 1 ] && [ "$speed" != quick ] && continue
    local scratch
    scratch="$(mktemp -d)"
    ln -s "$root" "$scratch/src"  # $ROOT as the outputs print it, wherever the tree is
    local status=0
    (cd "$scratch" && GPUSCALE_DATA_DIR="$root" SPDLOG_LEVEL=error G="$bin" ROOT=src \
       bash -c "$command" > "$scratch/.stdout" 2>/dev/null) || status=$?
    {
      echo "\$ $command"
      echo "exit $status"
      normalise < "$scratch/.stdout"
      (cd "$scratch" && find . -type f ! -name '.*' ! -path './src/*' | LC_ALL=C sort | while read -r f; do
         echo "--- $f"
         case "$f" in
           *.et) od -An -tx1 "$f" ;;   # Chakra traces are protobuf: compare their bytes
           *) normalise < "$f" ;;
         esac
       done)
    } > "$dir/$name.out"
    rm -rf "$scratch"
    echo "recorded $name (exit $status)"
  done < "$cases_file"
}

compare() {
  local before="$1" after="$2" failed=0 f
  for f in "$before"/*.out; do
    local name
    name="$(basename "$f")"
    if [ ! -f "$after/$name" ]; then
      echo "missing: $name"
      failed=1
    elif ! cmp -s "$f" "$after/$name"; then
      echo "differs: $name"
      diff "$f" "$after/$name" | head -20 || true  # diff exits 1: not the end of the loop
      failed=1
    fi
  done
  [ "$failed" = 0 ] && echo "identical: $(ls "$before"/*.out | wc -l) cases"
  return "$failed"
}

case "${1:-}" in
  record) [ $# -ge 2 ] || usage; record "$2" "$([ "${3:-}" = --quick ] && echo 1 || echo 0)" ;;
  diff) [ $# -eq 3 ] || usage; compare "$2" "$3" ;;
  check)
    out="$(mktemp -d)"
    trap 'rm -rf "$out"' EXIT
    record "$out" 1 > /dev/null
    compare "$root/tests/golden" "$out" ;;
  *) usage ;;
esac
