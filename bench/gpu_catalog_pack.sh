#!/usr/bin/env bash
# Issue 33: the packing gain on one GPU: the whole archive catalog, fixed work (GEN generations per
# target), one target after another (--jobs 1 --pack off) against all at once packed (--jobs N --pack on).
# Run on the device machine from the repository root, with .gpu/ holding bin/swarmfit.xz (a stripped
# sm_90 build), libs.tar.xz and run (../shared/tools/gpu-bundle), and full.tar.xz, the catalog made
# here: mkdir -p full/archive && cp ../shared/catalogs/exoplanet-archive-rv/{*.sys,*.vels,planets.csv}
# full/archive/ && printf 'folder = archive\nplanets = planets.csv\n' > full/archive.cfg &&
# tar cJf .gpu/full.tar.xz full. Settings: GEN, OPT, JOBS, LIMIT (s per run), MODES (packed seq conc),
# DROP (targets left out, e.g. 55Cnc), TARGETS, EXTRA (more keys), HOST_TARGETS (targets fitted on
# the host's CPU cores instead, `backend = cpu` in a [target NAME] section each: the slowest ones,
# whose single-thread GPU integrations bound the packed run; use with MODES=auto, as --pack on
# would pack their CPU batches one launch at a time). Results in $OUT/pack.tar.
set -uo pipefail
out=${OUT:-/tmp/out}; r=/tmp/packr; mkdir -p "$out" $r
cd .gpu
tar xJf libs.tar.xz
unxz -kf bin/swarmfit.xz && chmod +x bin/swarmfit
rm -rf full; tar xJf full.tar.xz
{ nvidia-smi --query-gpu=name,driver_version --format=csv; lscpu | grep 'Model name'; nproc; date; } | tee $r/machine.txt
cd full
[ -n "${DROP:-}" ] && for t in $DROP; do rm -f archive/${t}.sys archive/${t}_*.vels; done
# (backend in the description, not on the command line, whose keys override the targets' own)
grep -q '^backend' archive.cfg || printf 'backend = cuda\n' >> archive.cfg
for t in ${HOST_TARGETS:-}; do printf '\n[target %s]\nbackend = cpu\n' "$t" >> archive.cfg; done
keys="--no-report generations=${GEN:-100} optimize=${OPT:-100} ess_target=0 threads=1 ${EXTRA:-}"
save() { tar cf "$out/pack.tar" -C $r .; }
for mode in ${MODES:-packed seq}; do
  case $mode in
    packed) flags="--jobs ${JOBS:-512} --pack on";;
    auto) flags="--jobs ${JOBS:-512} --pack auto";;
    conc) flags="--jobs ${JOBS:-512} --pack off";;
    seq) flags="--jobs 1 --pack off";;
  esac
  /usr/bin/time -f "$mode wall %e s" timeout -s TERM ${LIMIT:-500} ../run swarmfit catalog --config archive.cfg \
    --output /tmp/p_$mode $flags ${TARGETS:+--targets $TARGETS} $keys > $r/$mode.log 2>&1; echo "rc $?" >> $r/$mode.log
  grep -E "packing:|fitted now|swarmfit catalog|wall|rc " $r/$mode.log | tail -5
  cp /tmp/p_$mode/summary.csv $r/summary_$mode.csv 2>/dev/null; save
done
cd $r
for f in summary_*.csv; do cut -d, -f1-5,7- "$f" > ${f%.csv}.notime; done
md5sum summary_*.notime; save
