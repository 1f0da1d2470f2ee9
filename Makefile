# Quick start: `make demo` and `make test` (each installs what is missing, configures, builds).
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all setup configure build demo test bench format clean

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

bench: build
	@scripts/setup.sh bench
	@$(BUILD)/apps/swarmfit bench

format:
	@git ls-files '*.cpp' '*.hpp' '*.cu' | xargs clang-format -i

clean:
	@rm -rf $(BUILD) $(BUILD).configure.log
