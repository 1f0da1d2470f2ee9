#!/usr/bin/env bash
# E1 on one GPU: the Kepler-9 fit (examples/kepler9.cfg) with backend=cuda. Run on the device
# machine from the repository root after, here:
#   gpu-bundle .gpu build-gpu/apps/swarmfit && bench/gpu_bundle_data.sh
# Environment: WALKERS (default 1024), SECONDS_LIMIT (default 420; the run is stopped with
# SIGTERM, which saves its state, and summarised, unless the stopping rule R-hat < 1.01 and bulk
# ESS >= 1000 ends it first), THIN (default 10), BURN_IN (generations of burn-in, default 2000:
# the outlier reset runs only there, and R-hat and ESS are computed after it), FIT_ARGS (more
# key=value settings, e.g. "kde=0.5 kde_components=1024"), TAG (suffix of the output files).
set -uo pipefail
out=${OUT:-/tmp/out}
mkdir -p "$out"
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader | tee "$out/machine.txt"
cfg=.gpu/kepler9/kepler9.cfg
# The generation rate with the CPU run's 48 walkers, for comparison.
.gpu/run swarmfit fit --config $cfg backend=cuda walkers=48 optimize=0 generations=300 check_every=1000 \
  output=/tmp/rate48.h5 overwrite=true progress=off predictive_draws=0 2>&1 | grep "generations in"
walkers=${WALKERS:-1024}
tag=${TAG:-}
start=$(date +%s)
timeout -s TERM "${SECONDS_LIMIT:-420}" .gpu/run swarmfit fit --config $cfg backend=cuda walkers="$walkers" \
  optimize=300 rhat_target=1.01 ess_target=1000 generations=10000000 thin="${THIN:-10}" burn_in="${BURN_IN:-2000}" \
  check_every=500 checkpoint_seconds=120 \
  output=/tmp/k9gpu$tag.h5 overwrite=true progress=off predictive_draws=20 ${FIT_ARGS:-} 2>&1 | tee "$out/fit$tag.txt" | tail -30
end=$(date +%s)
echo "wall seconds: $((end - start))" | tee -a "$out/fit$tag.txt"
.gpu/run swarmfit summary /tmp/k9gpu$tag.h5 2>&1 | tee "$out/summary$tag.txt"
