# Thin wrapper: install what is missing, configure once, build, run or test.
# `make run` and `make test` work on a fresh Debian 12 machine as root.
BUILD_DIR   ?= build
PRESET      ?= release
SCENARIO    ?= configs/scenarios/default.yaml
OUT         ?= out/default
CTEST_ARGS  ?=
JOBS        ?= $(shell nproc 2>/dev/null || echo 2)
FUZZ_DIR    ?= build-fuzz
FUZZ_TIME   ?= 30

.PHONY: all deps configure build run test test-all perf debug fuzz coverage clean help

all: build

help:
	@echo "make run      install deps, build, run $(SCENARIO) into $(OUT)"
	@echo "make test     install deps, build, run the test suite (ctest -LE long)"
	@echo "make build    build only"
	@echo "make test-all every test, including the long ones"
	@echo "make perf     run the performance scenarios under regress/perf"
	@echo "make debug    ASan/UBSan build in build-debug and its tests"
	@echo "make fuzz     libFuzzer targets in $(FUZZ_DIR) (clang), each run FUZZ_TIME=$(FUZZ_TIME) s"
	@echo "make coverage line and toggle coverage of the queue manager RTL (rtl/qm) into $(BUILD_DIR)/rtl-coverage"

# Quick when everything is installed: dpkg is asked first, apt only when needed.
deps:
	@bash scripts/install-deps.sh

# Configure only when there is no build tree; afterwards the build re-runs
# cmake itself when a CMakeLists.txt changes.
$(BUILD_DIR)/build.ninja: | deps
	cmake --preset $(PRESET) >/dev/null

configure: $(BUILD_DIR)/build.ninja

build: deps configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

run: build
	$(BUILD_DIR)/bin/rocesim run $(SCENARIO) --out $(OUT) --force

test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) -LE long $(CTEST_ARGS)

test-all: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) $(CTEST_ARGS)

perf: build
	bash regress/perf/run.sh

debug: deps
	cmake --preset debug >/dev/null
	cmake --build build-debug -j $(JOBS)
	cd build-debug && ASAN_OPTIONS=detect_leaks=0 ctest --output-on-failure -j $(JOBS) -LE long

# libFuzzer targets (docs/fuzzing.md): a clang build tree of its own with
# ASan/UBSan, then each target for FUZZ_TIME seconds from tb/fuzz/corpus/
# (ctest label "fuzz"; the nightly suite is `ctest -L nightly` in that tree).
fuzz:
	@bash scripts/install-deps.sh fuzz
	test -f $(FUZZ_DIR)/build.ninja || cmake -S . -B $(FUZZ_DIR) -G Ninja -DCMAKE_CXX_COMPILER=clang++-14 \
	  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DROCESIM_WERROR=OFF -DROCESIM_FUZZ=ON >/dev/null
	cmake --build $(FUZZ_DIR) -j $(JOBS) --target fuzz_targets
	cd $(FUZZ_DIR) && FUZZ_TIME=$(FUZZ_TIME) ctest --output-on-failure -L fuzz $(CTEST_ARGS)

# Verilator line and toggle coverage of rtl/qm (docs/rtl.md, "Coverage"):
# builds the coverage model and the RTL tests against it (not part of
# `make build`), runs them, prints the summary and checks it (ctest label
# coverage runs the same).
coverage: deps configure
	cmake --build $(BUILD_DIR) -j $(JOBS) --target rtl_coverage

clean:
	rm -rf $(BUILD_DIR) build-debug $(FUZZ_DIR) out
