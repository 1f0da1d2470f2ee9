#!/usr/bin/env bash
# Nsight Compute profiles on the device machine, from the repository root, after here:
#   gpu-bundle .gpu build-gpu/apps/swarmfit && bench/gpu_bundle_data.sh
# PROFILE (default "b7 b5"): b7 = the likelihood kernel (MVS, n = 3, observers on) of B7's 1e5
# batch; b7plain = the same systems integrated without observers (B7's observers-cost line); b5 = bare MVS, n = 3, dt 1e-2 (B5's first launch); b1 = Hermite, n = 3 (B1, dt 1e-3);
# b2n6 = Hermite, n = 6 (B2). The sections include the FP64 pipe's utilisation.
# Writes $OUT/profile.tgz: ncu_<name>.txt (sections) and <name>_source.csv (SASS with executed
# counts and stall samples per instruction: read with bench/sass_profile.py); prints a summary.
set -uo pipefail
out=${OUT:-/tmp/out}
work=/tmp/profile
mkdir -p "$out" "$work"
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
sections="--section ComputeWorkloadAnalysis --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats --section InstructionStats --section MemoryWorkloadAnalysis --section SourceCounters --metrics sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_fp64.avg.pct_of_peak_sustained_active"
files=()
for name in ${PROFILE:-b7 b5}; do
  case $name in
    b7 | b7plain) run=(bench --backend cuda --only B7 --b7-systems "${SYSTEMS:-100000}" --b7-config .gpu/kepler9/kepler9.cfg) ;;
    b5) run=(bench --backend cuda --only B5) ;;
    b1) run=(bench --backend cuda --only B1) ;;
    b2n6) run=(bench --backend cuda --only B2) ;;
    *) echo "unknown profile $name"; continue ;;
  esac
  # The default (fast) kernels only: B7's reproducible batch runs the strict ones in between.
  kernel=(--kernel-name-base mangled -k regex:fast_kernels16integrate_kernel)
  [ "$name" = b2n6 ] && kernel=(--kernel-name-base demangled -k "regex:Hermite, \\(int\\)6,")
  # Launch 0 is each benchmark's warm-up; launch 1 is the measured one. B7 runs six batches of
  # 8 slices each (1 below 16384 systems: CudaObservedPipeline), the batch in one slice twice, the
  # reproducible batch (strict kernels, not counted by the filter), then the observers' cost: the
  # first with-observers and without-observers pair, one launch each.
  skip=1
  if [ "${name#b7}" != "$name" ]; then
    slices=8
    [ "${SYSTEMS:-100000}" -lt 16384 ] && slices=1
    skip=$((6 * slices + 2))
    [ "$name" = b7plain ] && skip=$((skip + 1))
  fi
  $ncu $sections "${kernel[@]}" --launch-skip $skip --launch-count 1 -o $work/$name -f \
    .gpu/run swarmfit "${run[@]}" > $work/${name}_run.txt 2>&1
  $ncu --import $work/$name.ncu-rep --page details > $work/ncu_$name.txt 2>&1
  $ncu --import $work/$name.ncu-rep --page source --csv --print-source sass > $work/${name}_source.csv 2>&1
  files+=(ncu_$name.txt ${name}_source.csv ${name}_run.txt)
  grep -E "Duration|Registers Per|Achieved Occupancy|Warp Cycles Per Issued|Avg. Active Threads|pipe_fp64" $work/ncu_$name.txt | sed "s/^/$name: /"
done
tar czf "$out/profile.tgz" -C $work "${files[@]}"
