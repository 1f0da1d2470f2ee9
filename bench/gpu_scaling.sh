#!/usr/bin/env bash
# Issue 38 (and 33, 34, 36): C1, B8 and the TRAPPIST-1 fit on 1, 2 and 4 GPUs of one host, each
# with its 1-GPU baseline in the same call; the machine, `nvidia-smi topo -m` and every command's
# closing time lines in $OUT/scaling.txt (whole commands timed from outside with date +%s%N;
# C1 runs also with the GPUs' mean utilisation and the host's cores busy, from /proc/stat).
# Run on the device machine from the repository root, with a bundle folder B (default .gpu/x4)
# holding swarmfit.xz (a stripped build with -DSWARMFIT_CUDA=ON -DSWARMFIT_MARCH=x86-64-v3
# -DCMAKE_CUDA_ARCHITECTURES=90, xz -9e), libs.tar.xz (../shared/tools/gpu-bundle, without cuFFT),
# mpi.tar.xz and mpi_env.sh (bench/gpu_mpi_bundle.sh), full.tar.xz (the archive catalog, as
# bench/gpu_catalog_pack.sh makes it) and, for the fit, shared/data/TRAPPIST-1 (a copy of
# ../shared/data/TRAPPIST-1). Carry B. The scripts this session's runs used were this one's parts.
# Settings: RUNS (any of c1 b8 t1; default all), GPUS (default "1 2 4"), C1_CASES (R:H, R ranks with
# --host-targets H; default R:0 for R in GPUS), C1_PIN=1 (R ranks on R GPUs' share of the cores),
# C1_SOLO (below), C1_GEN (50), C1_OPT (20), C1_KEYS
# (more catalog keys, e.g. step_choice=largest), C1_MPI (more mpirun options, e.g. -x VARIABLE),
# C1_LIMIT (s a run, 200), B8_T (0.03125), B8_MPI (more mpirun options for B8, e.g.
# "-x GOMP_SPINCOUNT=10000"), B8_KEYS (more nbody keys, e.g. backend_steps=false),
# B8_LIMIT (200), T1_GEN (40); BIN (a swarmfit binary on the device machine instead of B's) and
# LABEL (the output's name: scaling$LABEL.txt), to compare two builds in one call.
set -uo pipefail
R=$(pwd); B=$R/${B:-.gpu/x4}; OUT=${OUT:-/tmp/out}; W=/tmp/scaling; mkdir -p "$OUT" $W
exec > >(tee "$OUT/scaling${LABEL:-}.txt") 2>&1
cd "$B" && source ./mpi_env.sh || exit 1
export LD_LIBRARY_PATH=/usr/local/cuda-13.0/targets/x86_64-linux/lib:$LD_LIBRARY_PATH
if [ -n "${BIN:-}" ]; then cp "$BIN" $W/swarmfit && cd $W || exit 1
else cd $W && xz -dc "$B/swarmfit.xz" > swarmfit && chmod +x swarmfit || exit 1; fi
nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm --format=csv,noheader; lscpu | grep "Model name"
nproc; date -u; nvidia-smi topo -m
ms() { date +%s%N | cut -c1-13; }
gpus=${GPUS:-1 2 4}
util() { nvidia-smi --query-gpu=index,utilization.gpu --format=csv,noheader -lms 1000 > "$1" & echo $!; }
mean_util() { awk -F', ' '{gsub(/ %/,"",$2); s[$1]+=$2; n[$1]++} END {for (i in s) printf "%s:%.0f%% ", i, s[i]/n[i]}' "$1"; }
# The host's CPU time between two readings of /proc/stat's first line, as cores busy on average.
cpu_mark() { awk '/^cpu / {print $2+$3+$4+$6+$7+$8, $5}' /proc/stat; }
cores_busy() { echo "$1 $2 $(nproc)" | awk '{b = $3 - $1; i = $4 - $2; printf "%.1f of %d cores busy", $5 * b / (b + i), $5}'; }

if [[ " ${RUNS:-c1 b8 t1} " == *" c1 "* ]]; then
  rm -rf $W/full && tar -C $W -xJf "$B/full.tar.xz" && rm -f $W/full/archive/55Cnc.sys $W/full/archive/55Cnc_*.vels \
    && awk '/^\[/ {skip = ($0 == "[target 55Cnc]")} !skip' $W/full/archive.cfg > $W/a.cfg && mv $W/a.cfg $W/full/archive.cfg
  echo "== C1: the archive catalog but 55 Cnc, ${C1_GEN:-50} generations after a ${C1_OPT:-20}-iteration optimiser, packed"
  # C1_CASES: R:H items, R GPUs (ranks) with --host-targets H. C1_PIN=1 holds an R-rank run to R
  # GPUs' share of the host's cores (taskset, the first R x nproc / GPUs), so that each GPU has the
  # same host cores however many run.
  per_gpu=$(( $(nproc) / $(nvidia-smi -L | wc -l) ))
  for case in ${C1_CASES:-$(for r in $gpus; do echo $r:0; done)}; do
    r=${case%%:*}; h=${case##*:}; pin=""
    [ -n "${C1_PIN:-}" ] && [ $(( r * per_gpu )) -lt $(nproc) ] && pin="taskset -c 0-$(( r * per_gpu - 1 ))"
    o=$W/c1_$r; rm -rf $o; s=$(ms); u=$(util $W/util_c1_$r.txt); c0=$(cpu_mark)
    (cd $W/full && timeout -s TERM ${C1_LIMIT:-200} $pin mpirun -np $r ${C1_MPI:-} ../swarmfit catalog --config archive.cfg --output $o \
      --no-report --jobs $((512 / r)) --pack on --host-targets $h backend=cuda generations=${C1_GEN:-50} \
      optimize=${C1_OPT:-20} ess_target=0 threads=1 ${C1_KEYS:-} > $o.log 2>&1)
    rc=$?; kill $u
    echo "c1 gpus=$r host_targets=$h ${pin:+($pin) }rc=$rc wall_ms=$(( $(ms) - s )) utilisation $(mean_util $W/util_c1_$r.txt); host: $(cores_busy "$c0" "$(cpu_mark)")"
    grep -E "host's CPU cores" $o.log
    grep -E "time:|packing|fits, the longest" $o.log
    [ -f $o/summary.csv ] && echo "  summary md5 (seconds aside) $(cut -d, -f1-5,7- $o/summary.csv | md5sum | cut -c1-8)" \
      && echo "  the longest fits (s): $(tail -n +2 $o/summary.csv | sort -t, -k6 -g -r | awk -F, '!seen[$1]++' | head -8 | cut -d, -f1,6 | tr '\n' ' ')"
  done
fi

# C1_SOLO (comma-separated target names): those targets alone on one GPU with one GPU's share of
# the host's cores (packed, --jobs = their count), then the same on those cores with backend=cpu
# (threads shared out), to see where the catalog's slowest targets run fastest.
if [ -n "${C1_SOLO:-}" ]; then
  per_gpu=$(( $(nproc) / $(nvidia-smi -L | wc -l) )); k=$(echo "$C1_SOLO" | tr ',' '\n' | wc -l)
  for b in cuda cpu; do
    o=$W/solo_$b; rm -rf $o; s=$(ms); t=1; [ $b = cpu ] && t=$(( per_gpu / k ))
    (cd $W/full && timeout -s TERM ${C1_LIMIT:-200} taskset -c 0-$((per_gpu - 1)) ../swarmfit catalog --config archive.cfg \
      --output $o --no-report --targets "$C1_SOLO" --jobs $k --pack on backend=$b generations=${C1_GEN:-50} \
      optimize=${C1_OPT:-20} ess_target=0 threads=$t ${C1_KEYS:-} > $o.log 2>&1)
    echo "solo $b (threads $t each) rc=$? wall_ms=$(( $(ms) - s )); fits (s): $(tail -n +2 $o/summary.csv 2>/dev/null | awk -F, '!seen[$1]++' | cut -d, -f1,6 | tr '\n' ' ')"
    grep -E "fits, the longest" $o.log
  done
fi

if [[ " ${RUNS:-c1 b8 t1} " == *" b8 "* ]]; then
  echo "== B8: swarmfit nbody, Plummer N = 2^20, order 4, T = ${B8_T:-0.03125}"
  export OMP_WAIT_POLICY=passive
  for r in $gpus; do
    s=$(ms)
    timeout -s TERM ${B8_LIMIT:-200} mpirun -np $r -x OMP_WAIT_POLICY ${B8_MPI:-} ./swarmfit nbody n=1048576 order=4 \
      softening=3.814697265625e-06 max_step=0.0078125 t_end=${B8_T:-0.03125} snapshot_interval=${B8_T:-0.03125} \
      backend=cuda output=$W/b8_$r overwrite=true --quiet ${B8_KEYS:-} 2>&1 | tail -3
    echo "b8 gpus=$r ${B8_KEYS:+(${B8_KEYS}) }wall_ms=$(( $(ms) - s ))"
  done
fi

if [[ " ${RUNS:-c1 b8 t1} " == *" t1 "* ]]; then
  echo "== TRAPPIST-1 (examples/trappist1.cfg), ${T1_GEN:-40} generations, no optimiser"
  mkdir -p $W/main/examples/data $W/shared && cp -r "$B/shared/data" $W/shared/ && cp "$R"/examples/*.cfg $W/main/examples/ \
    && cp "$R"/examples/data/*.cfg $W/main/examples/data/
  for r in $gpus; do
    s=$(ms)
    (cd $W/main/examples && timeout -s TERM 200 mpirun -np $r ../../swarmfit fit --config trappist1.cfg backend=cuda optimize=0 \
      generations=${T1_GEN:-40} burn_in=$(( ${T1_GEN:-40} / 2 )) check_every=100000 output=$W/t1_$r.h5 overwrite=true progress=off predictive_draws=0 \
      > $W/t1_$r.log 2>&1)
    echo "trappist1 gpus=$r rc=$? wall_ms=$(( $(ms) - s ))"; grep -E "generations in|sampling" $W/t1_$r.log
  done
fi
date -u
