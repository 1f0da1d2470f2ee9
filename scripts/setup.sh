#!/usr/bin/env bash
# Installs what swarmfit needs on a Debian machine, and only what is missing.
#   scripts/setup.sh          build and test dependencies (Debian packages; from PyPI: ArviZ, which
#                             the tests use to read fit output as users do, and what the Python
#                             package and its tests need: nanobind, scikit-build-core, pandas,
#                             pytest, emcee)
#   scripts/setup.sh bench    also the Python reference codes used by benchmarks (PyPI)
set -euo pipefail
# clang, libclang-rt-dev (libFuzzer, the sanitizers' runtimes) and libomp-dev (OpenMP for clang):
# the fuzz targets of `make fuzz-smoke` (tests/fuzz/README.md).
packages=(build-essential cmake pkg-config libhdf5-dev libboost-program-options-dev libeigen3-dev
          libcsv-dev librandom123-dev libfftw3-dev libfftw3-mpi-dev libgtest-dev googletest clang-format clang libclang-rt-dev libomp-dev
          python3 python3-pip python3-dev python3-venv python3-numpy python3-h5py python3-matplotlib
          libopenmpi-dev openmpi-bin chromium)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
fi
pip_install() {  # words of $1 are separate requirements
  # shellcheck disable=SC2086
  python3 -m pip install -q $1 2>/dev/null || python3 -m pip install -q --break-system-packages $1
}
# The python3 on PATH may not be Debian's (pyenv, a virtual environment): the Debian packages above
# then do not reach it, so its numpy, h5py and matplotlib come from PyPI.
if ! python3 -c "import numpy, h5py, matplotlib" 2>/dev/null; then
  echo "setup: installing numpy h5py matplotlib for $(command -v python3) (PyPI)"
  pip_install "numpy h5py matplotlib"
fi
# ArviZ, with numpy pinned to the installed version so that Debian's h5py keeps its numpy ABI.
if ! python3 -c "import arviz" 2>/dev/null; then
  numpy_version=$(python3 -c "import numpy; print(numpy.__version__)")
  pip_install "arviz numpy==$numpy_version" || echo "setup: warning: could not install ArviZ (its test will skip)"
fi
# The Python package (apps/python, pyproject.toml) and its tests (tests/python): the binding
# generator and build backend, pandas (ArviZ brings it), pytest and emcee; numpy pinned as above.
missing_modules=()
for pair in nanobind:nanobind scikit_build_core:scikit-build-core pandas:pandas pytest:pytest emcee:emcee; do
  python3 -c "import ${pair%%:*}" 2>/dev/null || missing_modules+=("${pair#*:}")
done
if [ ${#missing_modules[@]} -gt 0 ]; then
  echo "setup: installing ${missing_modules[*]} for $(command -v python3) (PyPI)"
  numpy_version=$(python3 -c "import numpy; print(numpy.__version__)")
  pip_install "${missing_modules[*]} numpy==$numpy_version" ||
    echo "setup: warning: could not install ${missing_modules[*]} (the Python package's build and tests will skip)"
fi
if [ "${1:-}" = "bench" ]; then
  python_packages=(numpy h5py rebound ttvfast radvel emcee)
  for p in "${python_packages[@]}"; do
    python3 -c "import $p" 2>/dev/null || pip_install "$p"
  done
fi
