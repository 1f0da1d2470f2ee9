# Quick start: `make demo` and `make test` (each installs what is missing, configures, builds).
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all setup configure build demo test fuzz-smoke fuzz-all sanitize sanitize-kernels bench format clean

all: build

setup:
	@scripts/setup.sh

configure: setup
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS) > $(BUILD).configure.log || (cat $(BUILD).configure.log; exit 1)

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

# The demo: a DEMCMC fit of the bundled synthetic two-planet RV + transit-time data
# (examples/demo), its summary and plots. Passive OpenMP waiting: a fit's batches are small, and
# spinning threads halve its speed when anything else runs (bench/RESULTS.md).
demo: build
	@cd examples/demo && OMP_WAIT_POLICY=passive ../../$(BUILD)/apps/swarmfit fit --config fit.cfg overwrite=true output=demo_fit.h5
	@cd examples/demo && ../../$(BUILD)/apps/swarmfit plot demo_fit.h5 --overwrite
	@echo "demo: truth in examples/demo/data/truth.csv, posterior in examples/demo/demo_fit_summary.csv, plots in examples/demo/demo_fit_plots/"

test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)
	@$(MAKE) --no-print-directory fuzz-smoke
	@$(MAKE) --no-print-directory sanitize

# Hostile input (issue 37; tests/fuzz/README.md). fuzz-smoke builds no SIMD kernel; sanitize builds
# the engines' and models' CPU kernels at -O1 / -O0 (minutes per file under the sanitizers at -O3),
# so that both fit CI (tests/sanitize/README.md has the times).
# fuzz-smoke: the libFuzzer targets fuzz_config, fuzz_data, fuzz_run_file, fuzz_params (clang,
# ASan + UBSan, CPU only) replay their committed corpus, then fuzz FUZZ_SECONDS each; any finding
# fails it. fuzz-all: the same (kept for scripts that call it).
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 30
# (CMAKE_FLAGS first: these builds are CPU-only whatever the main build's flags say.)
FUZZ_CONFIGURE = CC=clang CXX=clang++ cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS) \
	  -DSWARMFIT_FUZZ=ON -DSWARMFIT_CUDA=OFF -DSWARMFIT_TESTS=OFF -DSWARMFIT_PYTHON=OFF > $(FUZZ_BUILD).configure.log \
	  || (cat $(FUZZ_BUILD).configure.log; exit 1)
fuzz-smoke: setup
	@$(FUZZ_CONFIGURE)
	@cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzz_smoke_targets
	@tests/fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(JOBS) fuzz_config fuzz_data fuzz_run_file fuzz_params

fuzz-all: setup
	@$(FUZZ_CONFIGURE)
	@cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzz_targets
	@tests/fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(JOBS) fuzz_config fuzz_data fuzz_run_file fuzz_params

# sanitize: the test executables (SANITIZE_TESTS) built with ASan + UBSan (the kernel templates at
# -O1 or -O0; g++, CPU only) and run by ctest under them, selected by their label, but for SANITIZE_EXCLUDE;
# tests/sanitize/README.md says what is left out and why. The Python package is not built: a
# sanitized extension module loads only into an LD_PRELOADed python.
# CI runs the suites of the input readers, the sampler and both large engines; the CPU kernels'
# suites (test_integrators, test_models: 10 of CI's 90 minutes on 2 cores) run by hand when the
# kernels change: `make sanitize-kernels` (tests/sanitize/README.md).
ASAN_BUILD ?= build-asan
SANITIZE_TESTS ?= test_observations test_inference test_nbody test_pm
SANITIZE_KERNEL_TESTS ?= test_integrators test_models
SANITIZE_EXCLUDE ?= ^Demcmc[.](KdeMovesKeepTheBananaAndMixFaster|AdaptedTrajectoryLengthFindsTheGaussiansOptimum)$$
empty :=
space := $(empty) $(empty)
sanitize: setup
	@cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS) -DSWARMFIT_SANITIZE=ON \
	  -DSWARMFIT_CUDA=OFF -DSWARMFIT_PYTHON=OFF > $(ASAN_BUILD).configure.log || (cat $(ASAN_BUILD).configure.log; exit 1)
	@cmake --build $(ASAN_BUILD) -j $(JOBS) --target $(SANITIZE_TESTS)
	@cd $(ASAN_BUILD) && ASAN_OPTIONS=$${ASAN_OPTIONS:-detect_leaks=1:suppressions=$(CURDIR)/tests/sanitize/lsan.supp} \
	  LSAN_OPTIONS=$${LSAN_OPTIONS:-suppressions=$(CURDIR)/tests/sanitize/lsan.supp} \
	  UBSAN_OPTIONS=$${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
	  ctest --output-on-failure --no-tests=error -j $(JOBS) \
	  -L '^($(subst $(space),|,$(strip $(SANITIZE_TESTS))))$$' -E '$(SANITIZE_EXCLUDE)'

sanitize-kernels:
	@$(MAKE) --no-print-directory sanitize SANITIZE_TESTS="$(SANITIZE_KERNEL_TESTS)"

bench: build
	@scripts/setup.sh bench
	@$(BUILD)/apps/swarmfit bench

format:
	@git ls-files '*.cpp' '*.hpp' '*.cu' | xargs clang-format -i

clean:
	@rm -rf $(BUILD) $(BUILD).configure.log $(FUZZ_BUILD) $(FUZZ_BUILD).configure.log $(ASAN_BUILD) $(ASAN_BUILD).configure.log
