#!/usr/bin/env bash
# One device call: machine line, the GPU tests, then the GPU benchmarks. Run on the device
# machine from the repository root after, here:
#   gpu-bundle .gpu build-gpu/apps/swarmfit build-gpu/tests/test_integrators build-gpu/tests/test_models
#   bench/gpu_bundle_data.sh      (the Kepler-9 data and config for B7, into .gpu/kepler9)
# (build-gpu: -DSWARMFIT_CUDA=ON -DSWARMFIT_MARCH=x86-64-v3 -DCMAKE_CUDA_ARCHITECTURES=90). Environment: BENCH (default
# B1,B2,B3,B4,B5; empty skips), B7 (batch size; empty skips), ENERGY, ENERGY_SYSTEMS.
set -uo pipefail
out=${OUT:-/tmp/out}
mkdir -p "$out"
{
  nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version --format=csv
  nvcc --version | tail -1
  lscpu | grep 'Model name'
} 2>&1 | tee "$out/machine.txt"
{
  timeout 120 .gpu/run test_integrators --gtest_filter='Gpu*'
  timeout 300 .gpu/run test_models --gtest_filter='*Gpu*'
} 2>&1 | tee "$out/gpu_tests.txt" | grep -E "OK|FAILED|PASSED|Failure|Expected|actual|Which is"
if [ -n "${BENCH-B1,B2,B3,B4,B5}" ]; then
  timeout 240 .gpu/run swarmfit bench --backend cuda --only "${BENCH:-B1,B2,B3,B4,B5}" 2>&1 | tee "$out/bench_cuda.txt"
fi
if [ -n "${B7:-}" ]; then
  timeout 300 .gpu/run swarmfit bench --backend auto --only B7 --b7-systems "$B7" --b7-config .gpu/kepler9/kepler9.cfg 2>&1 | tee "$out/bench_b7.txt"
fi
if [ -n "${ENERGY:-}" ]; then
  timeout "${ENERGY_TIMEOUT:-200}" .gpu/run swarmfit bench --backend cuda --only E --energy-time "$ENERGY" --energy-systems "${ENERGY_SYSTEMS:-1024}" 2>&1 | tee "$out/bench_energy.txt"
fi
