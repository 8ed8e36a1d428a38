#!/usr/bin/env bash
# The hardening job (docs/hardening.md): builds gpuscale with Clang 19, AddressSanitizer and
# UndefinedBehaviorSanitizer into build-sanitize/, runs every test there (a sanitizer report
# fails its test), then runs each loader's libFuzzer target for SECONDS (default 20) from the
# shipped files and the bad-input corpus. Exit status: non-zero if a test fails or a fuzz target
# finds a crash, a leak, an escaped exception or a hang (its input is kept in
# build-sanitize/fuzz-findings/).
#
#   tools/sanitize.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-20}"

tools/install-deps.sh --sanitize
dir=build-sanitize
log=$dir/build.log
mkdir -p "$dir"
echo "building with sanitizers (log: $log)"
start=$(date +%s)
# -O1: sanitized code at -O2 takes twice as long to build for little faster tests. No CUDA: the
# calibration tool runs on GPU machines only, and nvcc's host compiler is not Clang.
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++-19 \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" -DGPUSCALE_FUZZ=ON -DGPUSCALE_CUDA=OFF > "$log" 2>&1 ||
  { cat "$log"; exit 1; }
cmake --build "$dir" -j "$(nproc)" >> "$log" 2>&1 || { tail -50 "$log"; exit 1; }
echo "built in $(( $(date +%s) - start )) s"

# Leaks in the libraries we link (SimGrid's engine lives until exit) are theirs, not ours.
export LSAN_OPTIONS="suppressions=$PWD/tools/lsan-suppressions.txt:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
start=$(date +%s)
set +e
# The speedup-invariant sweeps (tests/tools/test_cli_speedup_invariant.cpp) rerun `gpuscale run`
# over every shipped model and machine: paths the other tests already take, for three minutes
# unsanitized and several times that here. They check the model's physics, which the
# sanitizers do not change, so the README's test command runs them and this job does not.
(cd "$dir" && ctest --output-on-failure -j "$(nproc)" -E '^SpeedupInvariant\.' | tee ctest.log)
status=$?
set -e
echo "tests took $(( $(date +%s) - start )) s under the sanitizers"

# Seeds: the shipped files of each kind and the corpus's bad inputs of that kind.
declare -A seeds=(
  [topology]="topologies tests/bad_inputs/machine"
  [workload]="workloads tests/bad_inputs/workload"
  [experiment]="tools/experiments tests/bad_inputs/experiment"
  [study]="docs/studies tests/bad_inputs/study"
  [suite]="validation/dgx1-mxnet validation/mxnet-v100"
  [profile]="calibration/data tests/bad_inputs/profile"
)
findings=$dir/fuzz-findings
mkdir -p "$findings"
for target in topology workload experiment study suite profile; do
  corpus=$dir/fuzz-corpus/$target
  mkdir -p "$corpus"
  # shellcheck disable=SC2086  # the seed folders are words
  if ! "$dir/tests/fuzz/fuzz_$target" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=3072 \
      -artifact_prefix="$findings/$target-" -print_final_stats=1 "$corpus" ${seeds[$target]} \
      > "$dir/fuzz-$target.log" 2>&1; then
    tail -40 "$dir/fuzz-$target.log"
    echo "fuzz_$target found a failure: its input is in $findings/"
    status=1
  fi
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$dir/fuzz-$target.log" |
    grep -o '[0-9]*$')
  echo "fuzz_$target: ${runs:-?} inputs in $seconds s"
done
exit "$status"
