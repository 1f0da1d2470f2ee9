#!/usr/bin/env bash
# The fuzz smoke test of `make fuzz-smoke` (tests/fuzz/README.md): each libFuzzer target of
# BUILD/tests/fuzz first replays its committed corpus (tests/fuzz/corpus/TARGET), then fuzzes for
# SECONDS more from it; up to JOBS targets side by side. New inputs go to BUILD/fuzz/corpus/TARGET
# (the committed corpus is only read); any finding (a crash, a sanitizer report, an exception
# other than InputError, a hang past 10 s, more than 2 GB) fails the run, its input saved under
# BUILD/fuzz/findings/TARGET/.
#   usage: tests/fuzz/run.sh BUILD [SECONDS [JOBS [TARGET...]]]
# The targets default to the four of `make fuzz-smoke`.
set -euo pipefail
build=$(cd "$1" && pwd)
seconds=${2:-60}
jobs=${3:-$(nproc)}
source_dir=$(cd "$(dirname "$0")" && pwd)
shift $(($# < 3 ? $# : 3))
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(fuzz_config fuzz_data fuzz_run_file fuzz_params)
# Leaks are findings too; nothing to suppress so far (tests/fuzz/README.md).
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=0:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

run_one() {  # TARGET
  local target=$1 work="$build/fuzz" log
  mkdir -p "$work/corpus/$target" "$work/findings/$target"
  log="$work/$target.log"
  local options=(-seed=1 -timeout=10 -rss_limit_mb=2048 -max_len=65536 -artifact_prefix="$work/findings/$target/" -print_final_stats=1)
  if ! "$build/tests/fuzz/$target" "${options[@]}" -runs=0 "$source_dir/corpus/$target" > "$log" 2>&1 ||
     ! "$build/tests/fuzz/$target" "${options[@]}" -max_total_time="$seconds" "$work/corpus/$target" \
       "$source_dir/corpus/$target" >> "$log" 2>&1; then
    echo "fuzz: $target: FINDING (input in $work/findings/$target/, log $log):"
    tail -n 40 "$log"
    return 1
  fi
  echo "fuzz: $target: ok, $(grep -h 'stat::number_of_executed_units' "$log" | awk '{s += $2} END {print s}') inputs run"
}
export -f run_one
export build seconds source_dir
printf '%s\n' "${targets[@]}" | xargs -P "$jobs" -I{} bash -c 'run_one {}'
