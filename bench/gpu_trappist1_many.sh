#!/usr/bin/env bash
# E2's TRAPPIST-1 fit in several settings at once, one per GPU of a multi-GPU machine (each fit
# alone on its card: CUDA_VISIBLE_DEVICES), started from the least-squares optimum: run on the
# device machine from the repository root. Why: a fit to convergence is many minutes; the
# settings compared side by side get the same machine, date and binary.
# B (default .gpu/l2): the bundle of bench/gpu_trappist1.sh (libs.tar.xz, swarmfit.xz,
# shared/data), unpacked into /tmp/t1 unless PART=resume finds it there.
# KEYS_0 .. KEYS_7: each fit's key=value settings (added to the shared ones below; a key given twice is
# refused: CUDA_LAYOUT sets the shared cuda_layout, default system); the fits are
# those KEYS_i set. PART: fit (new runs) or resume (continue runs of an earlier call on the same,
# still warm machine); RUN_i (a path from the repository root): continue that run file in fit i. FIT_LIMIT seconds for every fit (SIGTERM saves its state; default 540).
# The run files' logs and the chain_mixing summaries come back in OUT; KEEP_RUN=1: the run files.
set -uo pipefail
R=$(pwd); B=$R/${B:-.gpu/l2}; OUT=${OUT:-/tmp/out}; W=/tmp/t1; mkdir -p "$OUT" $W
exec > >(tee -a "$OUT/trappist1_many.txt") 2>&1
export LD_LIBRARY_PATH=/usr/local/cuda-13.0/targets/x86_64-linux/lib:$W/lib:${LD_LIBRARY_PATH:-}
part=${PART:-fit}
if [ "$part" = fit ] || [ ! -x $W/swarmfit ]; then
  [ -f "$B/libs.tar.xz" ] && tar -C $W -xJf "$B/libs.tar.xz"
  rm -f $W/lib/libstdc++.so.6  # the machine's is newer
  [ -f "$B/swarmfit.xz" ] && { xz -T4 -dc "$B/swarmfit.xz" > $W/swarmfit && chmod +x $W/swarmfit; }
  [ -d "$B/shared/data" ] && mkdir -p $W/shared && cp -r "$B/shared/data" $W/shared/
fi
md5sum $W/swarmfit
nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm --format=csv,noheader; nproc; date -u
gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
[ "$gpus" -ge 1 ] || { echo "no GPU (nvidia-smi -L lists none)"; exit 1; }
$W/swarmfit --help > /dev/null 2>&1 || { echo "swarmfit does not start (libraries?)"; exit 1; }
shared="backend=cuda threads=$(($(nproc) / gpus)) optimize=0 least_squares=100 temperatures=1 kde=0 ess_target=1000"
shared="$shared cuda_layout=${CUDA_LAYOUT:-system} check_every=10 progress=auto"
pids=(); started=()
for i in 0 1 2 3 4 5 6 7; do
  var=KEYS_$i; keys=${!var:-}
  [ -z "$keys" ] && continue
  [ "$i" -ge "$gpus" ] && { echo "fit $i: no GPU $i"; continue; }
  d=$W/f$i/main/examples; mkdir -p $d $W/f$i/main/examples/data
  ln -sfn $W/shared $W/f$i/shared
  cp "$R"/examples/*.cfg $d/ && cp "$R"/examples/data/*.cfg $d/data/
  echo "fit $i: $keys"
  run=RUN_$i
  if [ -n "${!run:-}" ]; then  # a run file carried here (.xz: compressed)
    case "${!run}" in *.xz) xz -dc "$R/${!run}" > $W/f$i/run.h5 ;; *) cp "$R/${!run}" $W/f$i/run.h5 ;; esac
    extra="--resume"
  elif [ "$part" = resume ]; then extra="--resume"; else extra="overwrite=true"; fi
  # SIGTERM saves the state; SIGKILL 60 s later if saving hangs. $keys splits into key=value words
  # on purpose (no globbing: set -f).
  (set -f; cd $d && CUDA_VISIBLE_DEVICES=$i timeout -k 60 -s TERM ${FIT_LIMIT:-540} $W/swarmfit fit \
     --config trappist1.cfg $extra $shared $keys output=$W/f$i/run.h5 > $W/f$i/$part.log 2>&1; echo "fit $i rc=$?") &
  pids+=($!); started+=($i)
done
[ ${#pids[@]} -gt 0 ] || { echo "no fit to run (set KEYS_i for i below $gpus)"; exit 1; }
s=$(date +%s)
wait "${pids[@]}"
echo "all fits done in $(($(date +%s) - s)) s"
for i in "${started[@]}"; do  # this call's fits only (a warm machine keeps earlier ones)
  echo "===== fit $i"
  tail -45 $W/f$i/$part.log
  cp $W/f$i/$part.log "$OUT/fit${i}_$part.log"
  [ -n "${KEEP_RUN:-}" ] && cp $W/f$i/run.h5 "$OUT/run$i.h5"
  python3 -c "import h5py, numpy" 2>/dev/null && python3 "$R/bench/chain_mixing.py" $W/f$i/run.h5 --blocks 6 --top 6
done
