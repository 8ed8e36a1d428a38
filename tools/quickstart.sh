#!/usr/bin/env bash
# The README's two commands:
#   tools/quickstart.sh run    install what is missing, build, run the default study
#   tools/quickstart.sh test   install what is missing, build, run every test
# The executable lands at build/gpuscale.
set -euo pipefail
cd "$(dirname "$0")/.."

what="${1:-run}"
case "$what" in run|test) ;; *) echo "usage: tools/quickstart.sh run|test" >&2; exit 2 ;; esac

# `test` also drives `gpuscale serve`'s page in a headless chromium, which must then be there.
if [ "$what" = test ]; then
  tools/install-deps.sh --browser
  export GPUSCALE_REQUIRE_BROWSER=1
else
  tools/install-deps.sh
fi
mkdir -p build
log=build/build.log
echo "building (log: $log)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo > "$log" 2>&1 || { cat "$log"; exit 1; }
# `run` needs the executable only; `test` builds every test program too (most of the build).
target=()
[ "$what" = run ] && target=(--target gpuscale)
cmake --build build -j "$(nproc)" "${target[@]}" >> "$log" 2>&1 || { tail -50 "$log"; exit 1; }

if [ "$what" = run ]; then
  # The DGX-1 study (brief §1): five CNNs, 1/2/4/8 V100s, MXNet's P2P (kvstore=device) against
  # its NCCL kvstore (reduce + broadcast), strong scaling over 256K ImageNet images.
  exec build/gpuscale run tools/experiments/dgx1-study.yaml
fi
# ctest counts a skipped test (one needing ../shared's data, absent outside CI) among those that
# passed; the last line says how many did not run, and why (tools/ctest-skipped.sh).
cd build
set +e
ctest --output-on-failure -j "$(nproc)" | tee ctest.log
status=${PIPESTATUS[0]}
set -e
../tools/ctest-skipped.sh ctest.log
exit "$status"
