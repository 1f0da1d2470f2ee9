#!/usr/bin/env bash
# B9 on a device machine: the particle-mesh GPU tests and `pm_bench step` of this tree's build
# (and of an older build, side by side in one call, where .gpu/pm/bin/pm_bench_old exists).
# Build here, then bundle without cuFFT (the device image has it):
#   strip -o /tmp/pmb/pm_bench build-gpu/bench/pm_bench; strip -o /tmp/pmb/test_pm build-gpu/tests/test_pm
#   ../shared/tools/gpu-bundle .gpu/pm /tmp/pmb/*; rm .gpu/pm/lib/libcufft*
# and run with the device tool: `OUT=$OUT bash bench/gpu_pm.sh` carrying .gpu/pm.
# RUNS (default below): "SIDE MESH PRECISION [BOUNDARY [SOLVER [ORDER]]]" entries separated by ';'; REPS
# (default 10); ENVS: environment settings to run the new build under as extra rows (';'-separated);
# OLD=0: the new build alone.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bundle=$here/.gpu/pm
out=${OUT:-/tmp}
cufft=$(find / -name 'libcufft.so.12*' -not -path '*/proc/*' 2>/dev/null | head -1)
[ -n "$cufft" ] || { echo "no libcufft.so.12 on this machine" >&2; exit 1; }
export LD_LIBRARY_PATH="$bundle/lib:$(dirname "$cufft")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader | tee "$out/gpu.txt"
if [ "${TESTS:-1}" = 1 ]; then
  "$bundle/bin/test_pm" --gtest_filter='PmGpu.*' 2>&1 | tail -40 | tee "$out/tests.txt"
fi
RUNS=${RUNS:-"256 256 single;256 256 double;512 512 single;512 512 double;256 256 single isolated;512 1024 single"}
REPS=${REPS:-10}
IFS=';' read -ra runs <<<"$RUNS"
IFS=';' read -ra envs <<<"${ENVS:-}"
for r in "${runs[@]}"; do
  read -r side mesh precision boundary solver order <<<"$r"
  boundary=${boundary:-periodic}
  solver=${solver:-fft}
  order=${order:-lattice}
  for build in pm_bench_old pm_bench; do
    [ -x "$bundle/bin/$build" ] || continue
    [ "$build" = pm_bench_old ] && [ "${OLD:-1}" = 0 ] && continue
    echo "build=$build $("$bundle/bin/$build" step "$side" "$mesh" "$precision" cuda "$REPS" "$boundary" "$solver" "$order" 2>&1)" |
      tee -a "$out/pm.txt"
  done
  for e in "${envs[@]}"; do
    echo "build=pm_bench $e $(env $e "$bundle/bin/pm_bench" step "$side" "$mesh" "$precision" cuda "$REPS" "$boundary" "$solver" "$order" 2>&1)" |
      tee -a "$out/pm.txt"
  done
done
