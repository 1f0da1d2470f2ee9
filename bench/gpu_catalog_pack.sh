#!/usr/bin/env bash
# Issue 33: the packing gain on one GPU: the whole archive catalog, fixed work (GEN generations per
# target), one target after another (--jobs 1 --pack off) against all at once packed (--jobs N
# --pack on); and C1's run to the stopping rule.
# Run on the device machine from the repository root, with .gpu/ holding bin/swarmfit.xz (a
# stripped sm_90 build), libs.tar.xz and run (../shared/tools/gpu-bundle), and full.tar.xz, the
# catalog made here: mkdir -p full/archive && cp
# ../shared/catalogs/exoplanet-archive-rv/{*.sys,*.vels,planets.csv} full/archive/ && sed
# 's|^folder = .*|folder = archive|' examples/catalog/archive.cfg > full/archive.cfg && tar cJf
# .gpu/full.tar.xz full (C1's settings; GEN and OPT override its generations).
# Settings:
#   GEN, OPT       generations and optimiser iterations of the fixed-work modes (100, 100)
#   JOBS           targets at once (512)
#   MODES          packed, auto, conc, seq, rule (default "packed seq")
#   LIMIT          seconds a run (500); LIMIT_<mode> for one mode
#   DROP           targets whose files are removed (e.g. 55Cnc)
#   TARGETS        comma-separated targets of every mode but `rule`
#   SEQ_TARGETS    the targets of `seq` (a random sample, for its per-target time; default TARGETS)
#   RULE_TARGETS   the targets of `rule` (default all)
#   EXTRA          more key=value settings
#   DMON=1         nvidia-smi dmon (utilisation, power, clocks) every second beside each run
#   HOST_TARGETS   targets fitted on the host's CPU cores instead (`backend = cpu` in a [target
#                  NAME] section each: the slowest ones, whose single-thread GPU integrations bound
#                  the packed run; with MODES=auto, as --pack on would pack their CPU batches one
#                  launch at a time)
# Mode `rule` is C1: the description's own stopping rule (no GEN, OPT) with --jobs JOBS --pack on,
# into build-c1/rule under the repository root (kept on a warm machine: a second call resumes
# it), then each target's state (result.csv, or `swarmfit summary` of an unfinished run.h5) in
# rule_progress.txt. Results in $OUT/pack.tar.
set -uo pipefail
out=${OUT:-/tmp/out}; r=/tmp/packr; mkdir -p "$out" $r
root=$(pwd)
cufft=$(find / -name 'libcufft.so.12*' -not -path '*/proc/*' 2>/dev/null | head -1)  # (the device image's)
[ -n "$cufft" ] && export LD_LIBRARY_PATH="$(dirname "$cufft")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
cd .gpu
tar xJf libs.tar.xz
unxz -kf bin/swarmfit.xz && chmod +x bin/swarmfit
rm -rf full; tar xJf full.tar.xz
{ nvidia-smi --query-gpu=name,driver_version --format=csv; lscpu | grep 'Model name'; nproc; date; } | tee $r/machine.txt
cd full
[ -n "${DROP:-}" ] && for t in $DROP; do rm -f archive/${t}.sys archive/${t}_*.vels; done
# (backend in the description, not on the command line, whose keys override the targets' own; on
# its first line, as a key after a [target NAME] section belongs to that target)
grep -q '^backend' archive.cfg || sed -i '1i backend = cuda' archive.cfg
for t in ${HOST_TARGETS:-}; do printf '\n[target %s]\nbackend = cpu\n' "$t" >> archive.cfg; done
keys="--no-report generations=${GEN:-100} optimize=${OPT:-100} ess_target=0 threads=1 ${EXTRA:-}"
save() { tar cf "$out/pack.tar" -C $r .; }
for mode in ${MODES:-packed seq}; do
  dir=/tmp/p_$mode; mkeys=$keys; targets=${TARGETS:-}
  case $mode in
    packed) flags="--jobs ${JOBS:-512} --pack on";;
    auto) flags="--jobs ${JOBS:-512} --pack auto";;
    conc) flags="--jobs ${JOBS:-512} --pack off";;
    seq) flags="--jobs 1 --pack off"; targets=${SEQ_TARGETS:-$targets};;
    rule) flags="--jobs ${JOBS:-512} --pack on"; mkeys="--no-report threads=1 ${EXTRA:-}"; targets=${RULE_TARGETS:-}
          dir=$root/build-c1/rule; mkdir -p "$root/build-c1";;
  esac
  limit=LIMIT_$mode; limit=${!limit:-${LIMIT:-500}}  # (LIMIT_packed, LIMIT_seq, ...: per mode)
  # DMON=1: the card's utilisation, power and clocks every second beside the run (is it busy?)
  dmon=; [ "${DMON:-0}" = 1 ] && { nvidia-smi dmon -s puc -d 1 > $r/dmon_$mode.txt 2>&1 & dmon=$!; }
  /usr/bin/time -f "$mode wall %e s" timeout -s TERM $limit ../run swarmfit catalog --config archive.cfg \
    --output $dir $flags ${targets:+--targets $targets} $mkeys > $r/$mode.log 2>&1; echo "rc $?" >> $r/$mode.log
  [ -n "$dmon" ] && kill $dmon
  grep -E "packing|fitted now|swarmfit catalog|wall|rc " $r/$mode.log | tail -6
  cp $dir/summary.csv $r/summary_$mode.csv 2>/dev/null
  if [ $mode = rule ]; then  # (each target: done, or how far its run file got; 16 at once)
    progress() {
      if [ -f $1/result.csv ]; then tail -n +2 $1/result.csv | head -1
      elif [ -f $1/run.h5 ]; then echo "$(basename $1),running,$(../run swarmfit summary $1/run.h5 2>&1 |
        awk '/derived:/ {exit} NR == 1 {g = $0} NR > 2 && $(NF-1) + 0 > w {w = $(NF-1)} NR > 2 && (e == "" || $NF + 0 < e) {e = $NF}
             END {print g ", worst R-hat " w ", min ESS " e}')"
      fi
    }
    export -f progress
    ls -d $dir/targets/*/ | xargs -P 16 -I{} bash -c 'progress {}' > $r/rule_progress.txt
  fi
  save
done
cd $r
for f in summary_*.csv; do cut -d, -f1-5,7- "$f" > ${f%.csv}.notime; done
md5sum summary_*.notime; save
