#!/usr/bin/env bash
# E2's TRAPPIST-1 fit on one GPU, started from the least-squares optimum (least_squares = N):
# run on the device machine from the repository root. The bundle B (default .gpu/l1) may travel
# in two calls made back to back while the machine stays warm (the libraries and data first,
# the binary second: together they pass the call's size limit): each call unpacks what it
# carries into /tmp/t1, which the next call on the same machine reuses.
#   B/libs.tar.xz   libraries (gpu-bundle's lib/ less the CUDA ones; PART=prep lists those the
#                   machine has: boost_program_options, libcsv, fftw3_mpi, ldap, ssh2 and
#                   unistring were all it lacked, 2.7 MB with hdf5 and gomp)
#   B/swarmfit.xz   the stripped binary (built with -DCMAKE_CUDA_ARCHITECTURES=90)
#   B/shared/data   ../shared/data's TRAPPIST-1 (and other) folders
# PART: prep (unpack only), fit (a new run, FIT_LIMIT seconds at most, default 540; SIGTERM
# saves its state), resume (continue it). FIT_KEYS: more key=value settings. KEEP_RUN=1: the run
# file comes back in OUT too (for the chain's analysis here).
set -uo pipefail
R=$(pwd); B=$R/${B:-.gpu/l1}; OUT=${OUT:-/tmp/out}; W=/tmp/t1; mkdir -p "$OUT" $W
exec > >(tee -a "$OUT/trappist1.txt") 2>&1
export LD_LIBRARY_PATH=/usr/local/cuda-13.0/targets/x86_64-linux/lib:$W/lib:${LD_LIBRARY_PATH:-}
[ -f "$B/libs.tar.xz" ] && tar -C $W -xJf "$B/libs.tar.xz"
rm -f $W/lib/libstdc++.so.6  # the machine's is newer, and its libmpi_cxx needs it (GLIBCXX_3.4.32)
[ -f "$B/swarmfit.xz" ] && { xz -dc "$B/swarmfit.xz" > $W/swarmfit && chmod +x $W/swarmfit; }
if [ -d "$B/shared/data" ]; then
  mkdir -p $W/main/examples/data $W/shared && cp -r "$B/shared/data" $W/shared/
fi
cp "$R"/examples/*.cfg $W/main/examples/ && cp "$R"/examples/data/*.cfg $W/main/examples/data/
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; nproc; date -u
part=${PART:-fit}
if [ "$part" = prep ]; then
  ls $W/lib | wc -l
  for l in $(ls $W/lib); do ldconfig -p | grep -q "$l" && echo "machine has $l"; done
  exit 0
fi
$W/swarmfit --help > /dev/null 2>&1 || { echo "swarmfit does not start (libraries?)"; exit 1; }
keys="backend=cuda threads=16 output=$W/trappist1_fit.h5 ${FIT_KEYS:-}"
case " ${FIT_KEYS:-}" in *" progress="*) ;; *) keys="$keys progress=auto" ;; esac  # FIT_KEYS may set it
s=$(date +%s%N)
if [ "$part" = resume ]; then
  (cd $W/main/examples && timeout -s TERM ${FIT_LIMIT:-540} $W/swarmfit fit --config trappist1.cfg --resume $keys \
    > $W/fit_resume.log 2>&1)
  log=$W/fit_resume.log
else
  (cd $W/main/examples && timeout -s TERM ${FIT_LIMIT:-540} $W/swarmfit fit --config trappist1.cfg overwrite=true $keys \
    > $W/fit.log 2>&1)
  log=$W/fit.log
fi
echo "fit rc=$? wall_ms=$((($(date +%s%N) - s) / 1000000))"
cat $log | tail -80
cp $log "$OUT/"
if [ -f $W/trappist1_fit_summary.csv ]; then cp $W/trappist1_fit_summary.csv "$OUT/"; fi
[ -n "${KEEP_RUN:-}" ] && cp $W/trappist1_fit.h5 "$OUT/" 
# Where the walkers went (bench/chain_mixing.py, where h5py is there).
python3 -c "import h5py, numpy" 2>/dev/null && python3 "$R/bench/chain_mixing.py" $W/trappist1_fit.h5 --blocks 10 --top 8
