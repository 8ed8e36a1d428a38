#!/usr/bin/env bash
# How each command's cost grows with the GPU count, as a user runs it: wall time and peak resident
# memory of whole `gpuscale` invocations on a DGX H200 SuperPOD (grown to the nodes they need) at
# 512, 4,096, 16,384 and 65,536 GPUs:
#   run        ResNet-50, PyTorch DDP, batch 32, nccl: 3 iterations and the 1-GPU baseline; and
#              the same with the default --comm (p2p and nccl), as a new user first runs it
#   collective 100 MiB allreduce by NCCL's ring, its tree and its own choice (nccl_auto)
#   train      GPT-3 175B, TP 8 x PP 8 x DP (GPUs / 64), 8 micro-batches per pipeline
#   samples    the run above with --samples 32 on the SuperPOD with its GPUs' kernels varying
# Each row is the median of three invocations' wall times (this shared VM's times move by up to a
# third between runs), beside the largest peak memory; after each GPU count, what a sampled run
# costs in deterministic runs. Needs GNU time (Debian's `time` package) for the peak memory.
# Usage: tools/bench/bench_scale.sh [BUILD_DIR] [GPU_COUNT ...]   (default: build, the four)
set -euo pipefail

build=${1:-build}
shift || true
counts=("$@")
[ ${#counts[@]} -gt 0 ] || counts=(512 4096 16384 65536)
gpuscale="$build/gpuscale"
[ -x "$gpuscale" ] || { echo "bench_scale: no $gpuscale: build first (README)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench_scale: needs GNU time: apt-get install time" >&2; exit 2; }

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# The SuperPOD with a spread on every GPU's kernels: what a sampled iteration costs depends on
# which sources vary, not on the spread's size.
cat > "$scratch/varying-superpod.yaml" <<'EOF'
base: dgx-h200-superpod
name: varying-dgx-h200-superpod
variability:
  compute: {distribution: normal, cv: 0.01, source: "tools/bench/bench_scale.sh (a cost benchmark)"}
EOF

# Prints "wall_s peak_MB" of one invocation (its output discarded; a failure stops the bench). The
# wall time from the nanosecond clock: GNU time's is in hundredths, a tenth of a 512-GPU run.
measure_once() {
  local start end
  start=$(date +%s%N)
  /usr/bin/time -f "%M" -o "$scratch/time" "$gpuscale" "$@" > /dev/null 2> "$scratch/err" ||
    { echo "bench_scale: gpuscale $* failed:" >&2; cat "$scratch/err" >&2; exit 1; }
  end=$(date +%s%N)
  echo "$(( (end - start) / 1000000 )) $(( $(cat "$scratch/time") / 1024 ))"
}

# The median wall time of three invocations (milliseconds) and their largest peak memory (MB).
measure() {
  local runs
  runs=$(for _ in 1 2 3; do measure_once "$@"; done)
  echo "$(echo "$runs" | sort -n -k1,1 | sed -n 2p | cut -d' ' -f1) \
$(echo "$runs" | sort -n -k2,2 | tail -1 | cut -d' ' -f2)"
}

row() {  # command label, GPU count, then the invocation's arguments; sets $ms
  local what=$1 gpus=$2 mb
  shift 2
  read -r ms mb < <(measure "$@")
  printf '%-24s %7s %9s %9s\n' "$what" "$gpus" "$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))" "$mb"
}

printf '%-24s %7s %9s %9s\n' "command" "gpus" "wall s" "peak MB"
for g in "${counts[@]}"; do
  resnet=(run --workload resnet-50 --framework pytorch-ddp --batch 32 --comm nccl --gpus "$g")
  row "run" "$g" "${resnet[@]}" --topology dgx-h200-superpod
  run_ms=$ms
  row "run (default --comm)" "$g" run --workload resnet-50 --framework pytorch-ddp --batch 32 \
    --gpus "$g" --topology dgx-h200-superpod
  for algo in nccl nccl_tree nccl_auto; do
    row "collective $algo" "$g" collective --topology dgx-h200-superpod --bytes 100MiB \
      --gpus "$g" --algo "$algo"
  done
  dp=$((g / 64))
  row "train gpt3-175b" "$g" train --topology dgx-h200-superpod --workload gpt3-175b --tp 8 \
    --pp 8 --dp "$dp" --global-batch $((8 * dp))
  row "run --samples 32" "$g" "${resnet[@]}" --topology "$scratch/varying-superpod.yaml" \
    --samples 32
  printf '%-24s %7s %9s\n' "  samples / run" "$g" \
    "$(awk -v s="$ms" -v r="$run_ms" 'BEGIN { printf "%.2f", s / r }')"
done
