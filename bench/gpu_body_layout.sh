#!/usr/bin/env bash
# Issue 36: the likelihood kernels a thread per system against a thread per body (cuda_layout =
# system | body, likelihood_body_observer.cuh) on the fits of examples/, in one call:
#  check  short fits on the host's CPU, on the GPU a thread per system and a thread per body, all
#         with reproducible = true: the posterior tables must be the same bits (one md5 per fit);
#  time   fixed numbers of generations without the optimiser, both layouts, whole commands timed
#         from outside (date +%s%N) with the fit's own "sampling" line: TRAPPIST-1 (8 bodies),
#         Kepler-51 (4), TOI-216 and Kepler-9 (3), and Kepler-9 with E1's 8192 walkers;
#  fit    TRAPPIST-1 to convergence (examples/trappist1.cfg, cuda_layout = auto) for FIT_LIMIT s,
#         its run file kept under $B/run for a later call to resume (RESUME=1).
# Run on the device machine from the repository root with a bundle folder B (default .gpu/b1)
# holding swarmfit.xz (stripped, -DCMAKE_CUDA_ARCHITECTURES=90 -DSWARMFIT_MARCH=x86-64-v3),
# libs.tar.xz (../shared/tools/gpu-bundle; or libs_extra.tar.xz over an earlier call's libraries) and shared/data/{README.md,TRAPPIST-1,Kepler-51,TOI-216,
# Kepler-9} (copies of ../shared/data). Settings: PARTS (default "check time fit"; also "bodies":
# TRAPPIST-1's inner 4, 5, 6 planets, both layouts), FITS, LAYOUTS,
# GEN_<fit>, FIT_LIMIT (default 300), FIT_KEYS (more keys for the long fit), RESUME.
set -uo pipefail
R=$(pwd); B=$R/${B:-.gpu/b1}; OUT=${OUT:-/tmp/out}; W=/tmp/layout; mkdir -p "$OUT" $W
exec > >(tee -a "$OUT/layout.txt") 2>&1
export LD_LIBRARY_PATH=/usr/local/cuda-13.0/targets/x86_64-linux/lib:$W/lib:${LD_LIBRARY_PATH:-}
[ -x $W/swarmfit ] || { xz -dc "$B/swarmfit.xz" > $W/swarmfit && chmod +x $W/swarmfit; } || exit 1
[ -d $W/lib ] || tar -C $W -xJf "$B/libs.tar.xz"
# libs_extra.tar.xz: the libraries swarmfit needs beyond a test bundle's, unpacked by an earlier call on this machine.
[ -f "$B/libs_extra.tar.xz" ] && tar -C $W -xJf "$B/libs_extra.tar.xz"
$W/swarmfit --help > /dev/null 2>&1 || { echo "swarmfit does not start (libraries?)"; exit 1; }
mkdir -p $W/main/examples/data $W/shared && cp -r "$B/shared/data" $W/shared/ && cp "$R"/examples/*.cfg $W/main/examples/ \
  && cp "$R"/examples/data/*.cfg $W/main/examples/data/
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; nproc; date -u
ms() { date +%s%N | cut -c1-13; }
fit() {  # fit NAME LOG KEYS...
  local name=$1 log=$2; shift 2
  (cd $W/main/examples && timeout -s TERM ${LIMIT:-300} $W/swarmfit fit --config $name.cfg optimize=0 check_every=100000 \
    output=$W/$name.h5 overwrite=true progress=off predictive_draws=0 "$@" > $log 2>&1)
}
table_md5() { sed -n '/posterior (/,/derived:/p' "$1" | md5sum | cut -c1-12; }
parts=" ${PARTS:-check time fit} "

if [[ $parts == *" check "* ]]; then
  echo "== check: posterior tables, reproducible = true: cpu (16 threads), cuda system, cuda body"
  declare -A CG=([trappist1]=10 [kepler51]=30 [kepler9]=30 [toi216]=30)
  for name in trappist1 kepler51 kepler9 toi216; do
    line="$name generations=${CG[$name]}:"
    fit $name $W/c_${name}_cpu.log backend=cpu threads=16 generations=${CG[$name]}
    line="$line cpu rc=$? $(table_md5 $W/c_${name}_cpu.log)"
    for layout in system body; do
      fit $name $W/c_${name}_$layout.log backend=cuda reproducible=true cuda_layout=$layout generations=${CG[$name]}
      line="$line $layout rc=$? $(table_md5 $W/c_${name}_$layout.log)"
    done
    echo "$line"
  done
  sed -n '/posterior (/,/derived:/p' $W/c_trappist1_body.log | head -8
fi

if [[ $parts == *" time "* ]]; then
  echo "== time: fixed generations, no optimiser, cuda (default arithmetic)"
  declare -A GEN=([trappist1]=${GEN_trappist1:-40} [kepler51]=${GEN_kepler51:-400} [toi216]=${GEN_toi216:-1000} \
    [kepler9]=${GEN_kepler9:-300})
  for name in ${FITS:-trappist1 kepler51 toi216 kepler9}; do
    for layout in ${LAYOUTS:-system body}; do
      s=$(ms)
      fit $name $W/t_${name}_$layout.log backend=cuda generations=${GEN[$name]} cuda_layout=$layout
      echo "$name layout=$layout rc=$? wall_ms=$(( $(ms) - s )) $(grep -hE 'sampling' $W/t_${name}_$layout.log | head -1)"
    done
  done
  for layout in system body; do
    s=$(ms)
    fit kepler9 $W/t_e1_$layout.log backend=cuda generations=100 walkers=8192 kde=0.5 kde_components=1024 threads=16 \
      cuda_layout=$layout
    echo "kepler9 walkers=8192 layout=$layout rc=$? wall_ms=$(( $(ms) - s )) $(grep -hE 'sampling' $W/t_e1_$layout.log | head -1)"
  done
  s=$(ms)
  fit trappist1 $W/t_t1_1024.log backend=cuda generations=40 walkers=1024 cuda_layout=body
  echo "trappist1 walkers=1024 layout=body rc=$? wall_ms=$(( $(ms) - s )) $(grep -hE 'sampling' $W/t_t1_1024.log | head -1)"
fi

if [[ $parts == *" bodies "* ]]; then
  echo "== bodies: TRAPPIST-1's inner K planets (their transit times only), K = 4, 5, 6: 5, 6, 7 bodies, 40 generations"
  for k in 4 5 6; do
    awk -F, -v k=$k '$1 <= k' $W/shared/data/TRAPPIST-1/T1_timings_20191203.txt > $W/shared/data/TRAPPIST-1/inner$k.txt
    names=$(echo "1:b 2:c 3:d 4:e 5:f 6:g" | cut -d' ' -f1-$k)
    sed -e "s|T1_timings_20191203.txt|inner$k.txt|" -e "s|^planet_names = .*|planet_names = $names|" \
      $W/main/examples/data/trappist1.cfg > $W/main/examples/data/inner$k.cfg
    drop=$(echo "b c d e f g h" | cut -d' ' -f$((k + 1))- | tr ' ' '|')  # the outer planets' sections and priors
    awk -v k=$k '/^\[/{skip = 0} /^\[planet /{n++; if (n > k) skip = 1} !skip' $W/main/examples/trappist1.cfg \
      | grep -vE "_($drop) =" | sed "s|data/trappist1.cfg|data/inner$k.cfg|" > $W/main/examples/inner$k.cfg
    for layout in system body; do
      s=$(ms)
      fit inner$k $W/b_${k}_$layout.log backend=cuda generations=40 cuda_layout=$layout
      echo "inner$k ($((k + 1)) bodies) layout=$layout rc=$? wall_ms=$(( $(ms) - s )) $(grep -hE 'sampling' $W/b_${k}_$layout.log | head -1)"
    done
  done
fi

if [[ $parts == *" fit "* ]]; then
  echo "== fit: TRAPPIST-1 to convergence, ${FIT_LIMIT:-300} s at most this call ${FIT_KEYS:-}"
  mkdir -p $B/run
  s=$(ms)
  if [ -n "${RESUME:-}" ]; then
    (cd $W/main/examples && timeout -s TERM ${FIT_LIMIT:-300} $W/swarmfit fit --config trappist1.cfg --resume \
      backend=cuda output=$B/run/trappist1_fit.h5 progress=off ${FIT_KEYS:-} > $W/fit.log 2>&1)
  else
    (cd $W/main/examples && timeout -s TERM ${FIT_LIMIT:-300} $W/swarmfit fit --config trappist1.cfg backend=cuda \
      output=$B/run/trappist1_fit.h5 overwrite=true progress=off ${FIT_KEYS:-} > $W/fit.log 2>&1)
  fi
  echo "fit rc=$? wall_ms=$(( $(ms) - s ))"
  grep -vE "^  generation " $W/fit.log | tail -60; grep -E "^  generation " $W/fit.log | tail -3
  cp $W/fit.log "$OUT/fit_$(date +%H%M).log"
fi
date -u
