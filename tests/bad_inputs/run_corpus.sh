#!/usr/bin/env bash
# The bad-input corpus: runs each case of tests/bad_inputs and compares what gpuscale does with
# what the case's .expect file says it must do (tests/bad_inputs/README.md).
#
#   run_corpus.sh GPUSCALE_EXE SOURCE_DIR [CASE...]
#
# CASE is a kind (`machine`: every case of tests/bad_inputs/machine), a case (`machine/x`), or a
# case's file (`tests/bad_inputs/machine/x.yaml`, `.../x.expect`); none: every case. Each case
# runs from SOURCE_DIR, with the case's path relative to it, under `timeout 30` and a 4 GB
# address-space limit (none when GPUSCALE_CORPUS_SANITIZED is set: ASan needs terabytes). A case passes when the exit status and stderr are exactly the expected
# ones, stdout is empty (for a failure), and its scratch folder ({tmp}) holds no `*.partial` file
# and, for a failure, no file at all. One line per failing case, then a summary; exit status 1
# if any case failed, 2 for bad arguments. With GPUSCALE_CORPUS_ACCEPT=1 a failing case's .expect
# is rewritten with what gpuscale did (its `# defect` lines dropped): for after a fix.
set -u

if [[ $# -lt 2 ]]; then
  echo "usage: $0 GPUSCALE_EXE SOURCE_DIR [CASE...]" >&2
  exit 2
fi
exe=$1
src=$2
shift 2
if [[ ! -x $exe ]]; then
  echo "run_corpus.sh: $exe is not an executable" >&2
  exit 2
fi
exe=$(cd "$(dirname "$exe")" && pwd)/$(basename "$exe")
cd "$src" || { echo "run_corpus.sh: no source folder $src" >&2; exit 2; }
src=$(pwd)
src_pattern=$(printf "%s" "$src" | sed "s/[][\\.*^$|]/\\\\&/g")
corpus=tests/bad_inputs

# The command of each kind; a case's `command:` line replaces it.
default_command() {
  case $1 in
    machine) echo 'topo show {input}' ;;
    gpu) echo 'workload show lenet --gpu {input}' ;;
    workload) echo 'workload show {input}' ;;
    framework) echo 'workload show lenet --framework {input}' ;;
    dataset) echo 'workload show lenet --set dataset={input}' ;;
    experiment) echo 'run {input} --trace {tmp}/trace.json --events {tmp}/events.csv' ;;
    study) echo 'sweep {input} --out {tmp}/out --jobs 1' ;;
    suite) echo 'validate --suite {input}' ;;
    profile) echo 'workload layers lenet --profile {input}' ;;
    *) return 1 ;;
  esac
}

# The .expect files the arguments name, one per line.
list_cases() {
  if [[ $# -eq 0 ]]; then
    find "$corpus" -mindepth 2 -maxdepth 2 -name '*.expect' | LC_ALL=C sort
    return
  fi
  local arg
  for arg in "$@"; do
    arg=${arg#"$corpus"/}
    arg=${arg%/}
    if [[ -d $corpus/$arg && $arg != */* ]]; then
      find "$corpus/$arg" -mindepth 1 -maxdepth 1 -name '*.expect' | LC_ALL=C sort
    else
      local stem=${arg%.*}
      [[ -f $corpus/$arg.expect || -d $corpus/$arg ]] && stem=$arg
      if [[ -f $corpus/$stem.expect ]]; then
        echo "$corpus/$stem.expect"
      else
        echo "MISSING $arg"
      fi
    fi
  done
}

# The case's input: NAME.yaml, NAME/ (a suite folder), or the one other NAME.* beside NAME.expect.
input_of() {
  local stem=$1 f
  if [[ -e $stem.yaml ]]; then echo "$stem.yaml"; return; fi
  if [[ -d $stem ]]; then echo "$stem"; return; fi
  for f in "$stem".*; do
    [[ $f == "$stem.expect" || ! -e $f ]] && continue
    echo "$f"
    return
  done
  echo ""
}

scratch=$(mktemp -d "${TMPDIR:-/tmp}/gpuscale-corpus.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

passed=0
failed=0
# A predictable environment: shipped files from this source tree, no folder overrides.
export GPUSCALE_DATA_DIR=$src
unset GPUSCALE_TOPOLOGIES_DIR GPUSCALE_GPUS_DIR GPUSCALE_WORKLOADS_DIR GPUSCALE_FRAMEWORKS_DIR \
  GPUSCALE_DATASETS_DIR GPUSCALE_VALIDATION_DIR SPDLOG_LEVEL
export LC_ALL=C.UTF-8 TZ=UTC

while IFS= read -r expect; do
  if [[ $expect == MISSING\ * ]]; then
    echo "FAIL ${expect#MISSING }: no such case or kind (no $corpus/${expect#MISSING }.expect)"
    failed=$((failed + 1))
    continue
  fi
  stem=${expect%.expect}
  case_name=${stem#"$corpus"/}
  kind=${case_name%%/*}
  input=$(input_of "$stem")

  # The header: `# comment`, `command: ARGS`, `exit: N`, then `stderr:`; the rest is the stderr.
  command=""
  want_exit=""
  header_lines=0
  bad_header=""
  while IFS= read -r line || [[ -n $line ]]; do
    header_lines=$((header_lines + 1))
    case $line in
      '#'*) ;;
      'command: '*) command=${line#command: } ;;
      'exit: '*) want_exit=${line#exit: } ;;
      'stderr:') break ;;
      *) bad_header="unexpected header line '$line'"; break ;;
    esac
  done < "$expect"
  if [[ -z $command ]]; then
    command=$(default_command "$kind") || bad_header="no command: line and no default for kind '$kind'"
  fi
  [[ -z $want_exit && -z $bad_header ]] && bad_header="no exit: line"
  if [[ -n $bad_header ]]; then
    echo "FAIL $case_name: bad .expect: $bad_header"
    failed=$((failed + 1))
    continue
  fi

  tmp=$scratch/$kind.${case_name##*/}
  mkdir -p "$tmp"
  tail -n +"$((header_lines + 1))" "$expect" > "$scratch/want"
  command=${command//\{input\}/$input}
  command=${command//\{tmp\}/$tmp}
  command=${command//\{dir\}/$corpus/$kind}
  # Words of the command line, quotes honoured (the corpus's own files, not user input).
  eval "args=($command)"
  (
    [[ -z ${GPUSCALE_CORPUS_SANITIZED:-} ]] && ulimit -v 4000000 2>/dev/null
    ulimit -c 0 2>/dev/null
    exec timeout -k 5 30 "$exe" "${args[@]}"
  ) > "$scratch/stdout" 2> "$scratch/stderr" < /dev/null
  got_exit=$?
  # Absolute paths differ from machine to machine: messages read them as {tmp} and {src}.
  tmp_pattern=$(printf "%s" "$tmp" | sed "s/[][\\.*^$|]/\\\\&/g")
  sed -i -e "s|$tmp_pattern|{tmp}|g" -e "s|$src_pattern|{src}|g" "$scratch/stderr"

  problems=()
  if [[ $got_exit != "$want_exit" ]]; then
    why=""
    [[ $got_exit == 124 ]] && why=" (timed out after 30 s)"
    [[ $got_exit -gt 128 ]] && why=" (killed by signal $((got_exit - 128)))"
    problems+=("exit $got_exit$why, expected $want_exit")
  fi
  if ! cmp -s "$scratch/want" "$scratch/stderr"; then
    problems+=("stderr differs:
$(diff "$scratch/want" "$scratch/stderr" | head -n 8 | cut -c1-300 | sed 's/^/    /')")
  fi
  if [[ $want_exit != 0 && -s $scratch/stdout ]]; then
    problems+=("stdout not empty: $(head -c 200 "$scratch/stdout" | head -n 1)")
  fi
  partial=$(find "$tmp" -name '*.partial' | head -n 3)
  [[ -n $partial ]] && problems+=("half-written file left: ${partial//$'\n'/, }")
  if [[ $want_exit != 0 ]]; then
    left=$(find "$tmp" -type f | head -n 3)
    [[ -n $left ]] && problems+=("a failed run left files: ${left//$'\n'/, }")
  fi

  if [[ ${#problems[@]} -gt 0 && ${GPUSCALE_CORPUS_ACCEPT:-} == 1 ]]; then
    # After a fix: what gpuscale prints now becomes the expectation (review the diff).
    {
      head -n "$((header_lines - 1))" "$expect" | grep -v -e '^# defect' -e '^exit: '
      echo "exit: $got_exit"
      echo "stderr:"
      cat "$scratch/stderr"
    } > "$scratch/accepted"
    mv "$scratch/accepted" "$expect"
    echo "ACCEPTED $case_name: $(head -n 1 "$scratch/stderr" | cut -c1-200)"
    problems=()
  fi
  if [[ ${#problems[@]} -eq 0 ]]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAIL $case_name (${input:-no input file}): ${problems[0]}"
    for p in "${problems[@]:1}"; do echo "  and $p"; done
  fi
  rm -rf "$tmp"
done < <(list_cases "$@")

echo "bad inputs: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
