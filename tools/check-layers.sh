#!/usr/bin/env bash
# Checks that the folders form layers that point one way (README, "Layout"): a file may include
# its own layer's headers and those of the layers below it, never those above. From the bottom:
# topologies/core (the basement: units, errors, the config tree, YAML documents, which includes
# nothing of ours but itself), the rest of topologies, workloads, sim (its modules in their own
# order: kernel times, collective schedules, the engine, the replay and the contracts it asks, the
# exchange methods that implement them, experiments, then parallelism and traces), calibration,
# validation, tools. tests/ may include anything. Prints every include that points up, with its
# file and line, and exits 1 if there is one.
#
#   tools/check-layers.sh [TREE]
set -euo pipefail
cd "${1:-$(dirname "$0")/..}"

layers=(topologies/core topologies workloads
        sim/compute sim/collectives sim/engine sim/replay sim/exchange sim/experiment sim/parallel
        sim/trace sim calibration validation tools)

# The layer of a path: the first (most specific) layer it lies in, its index also its height;
# -1 if none.
layer_of() {
  local path="$1" i
  for i in "${!layers[@]}"; do
    case "$path" in "${layers[$i]}"/*) echo "$i"; return ;; esac
  done
  echo -1
}
violations=0
while IFS= read -r file; do
  from=$(layer_of "$file")
  [ "$from" -lt 0 ] && continue
  while IFS=: read -r line include; do
    to=$(layer_of "$include")
    [ "$to" -lt 0 ] && continue
    if [ "$to" -gt "$from" ]; then
      echo "$file:$line: includes $include (${layers[$to]} is above ${layers[$from]})"
      violations=$((violations + 1))
    fi
  done < <(grep -n '^#include "' "$file" | sed -E 's/^([0-9]+):#include "([^"]+)".*/\1:\2/')
done < <(git ls-files --cached --others --exclude-standard '*.cpp' '*.hpp' '*.cu' '*.h' | grep -v '^tests/')

if [ "$violations" -gt 0 ]; then
  echo "check-layers: $violations include(s) point up a layer" >&2
  exit 1
fi
echo "check-layers: every include points down or within its layer (${layers[*]})"
