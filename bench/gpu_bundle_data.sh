#!/usr/bin/env bash
# Copies the Kepler-9 data of ../shared/data (which does not travel to the device machine) and a
# config pointing at them into .gpu/kepler9, for B7 on the device (bench/gpu_run.sh).
set -euo pipefail
mkdir -p .gpu/kepler9
cp ../shared/data/Kepler-9/NB2_observations.dat ../shared/data/Kepler-9/NB3_observations.dat \
   ../shared/data/Kepler-9/obsRV.dat .gpu/kepler9/
sed 's|\.\./\.\./\.\./shared/data/Kepler-9/||' examples/data/kepler9.cfg > .gpu/kepler9/data.cfg
sed 's|include = data/kepler9.cfg|include = data.cfg|' examples/kepler9.cfg > .gpu/kepler9/kepler9.cfg
