#!/usr/bin/env bash
# One device call: machine line, the GPU tests, then the GPU benchmarks. Run on the device
# machine from the repository root after `gpu-bundle .gpu build-gpu/apps/swarmfit
# build-gpu/tests/test_integrators` here (build-gpu: -DSWARMFIT_CUDA=ON -DSWARMFIT_MARCH=x86-64-v3).
set -uo pipefail
out=${OUT:-/tmp/out}
mkdir -p "$out"
{
  nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version --format=csv
  nvcc --version | tail -1
  lscpu | grep 'Model name'
} 2>&1 | tee "$out/machine.txt"
timeout 120 .gpu/run test_integrators --gtest_filter='Gpu*' 2>&1 | tee "$out/gpu_tests.txt" | grep -E "OK|FAILED|PASSED|Failure|Expected|actual"
timeout 240 .gpu/run swarmfit bench --backend cuda --only "${BENCH:-B1,B2,B3,B4,B5}" 2>&1 | tee "$out/bench_cuda.txt"
if [ -n "${ENERGY:-}" ]; then
  timeout "${ENERGY_TIMEOUT:-200}" .gpu/run swarmfit bench --backend cuda --only E --energy-time "$ENERGY" --energy-systems "${ENERGY_SYSTEMS:-1024}" 2>&1 | tee "$out/bench_energy.txt"
fi
