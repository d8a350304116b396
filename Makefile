# fleetsim — one command for each thing a user or CI does.
#   make demo   install the program's dependencies, build the program only, run the diffusion example
#   make test   install dependencies, build, run the whole test suite (the Python tests from
#               the package installed into a fresh virtual environment, build/python-venv)
#   make build  build only (dependencies must be installed)
#   make e2e    build and run only the browser tests of the viewer
#   make asan   the tests under ASan+UBSan (clang, build-fuzz/, shared with the fuzzers)
#   make tsan   the tests under ThreadSanitizer (build-tsan/)
#   make fuzz   build the fuzzers (clang, build-fuzz/) and run each for FUZZ_SECONDS
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
FUZZ_SECONDS ?= 30
FUZZ_SEED ?= 0

.PHONY: deps demo-deps configure reconfigure build test demo e2e asan tsan fuzz bench clean format

deps:
	@scripts/install-deps.sh

# The packages configuring and building the program need, and no more (no browser, Open MPI,
# Python, ffmpeg, clang): a fresh machine's first demo does not wait for the test tools.
demo-deps:
	@scripts/install-deps.sh --demo

# Twice: CMake's first configure spells libzmq's include flags one way and every later one
# another, so a later configure (make test's after make demo, or CMake's own after an edit to a
# CMakeLists.txt) would rebuild every file that includes libzmq (about half of the program).
$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja $(CMAKE_FLAGS)
	cmake -S . -B $(BUILD) -G Ninja $(CMAKE_FLAGS) >/dev/null

configure: $(BUILD)/build.ninja

# After `make demo` configured build/ with only the program's packages, configures again once
# the rest is installed, so that the optional ones (Open MPI, pybind11, Google Benchmark) are
# found.
reconfigure:
	@if [ -f $(BUILD)/.configured-by-demo ]; then \
	  cmake -S . -B $(BUILD) -G Ninja $(CMAKE_FLAGS) && rm -f $(BUILD)/.configured-by-demo; fi

build: configure
	cmake --build $(BUILD) -j $(JOBS)

test: deps
	@$(MAKE) --no-print-directory reconfigure
	@$(MAKE) --no-print-directory build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS) --timeout 600 --repeat after-timeout:2

# Only the program the demo runs (the tests, benches and Python module are left to `make test`).
demo: demo-deps
	@test -f $(BUILD)/build.ninja || { $(MAKE) --no-print-directory configure && \
	  touch $(BUILD)/.configured-by-demo; }
	cmake --build $(BUILD) -j $(JOBS) --target fleetsim
	@scripts/demo.sh $(BUILD)

e2e: deps
	@$(MAKE) --no-print-directory reconfigure
	@$(MAKE) --no-print-directory build
	ctest --test-dir $(BUILD) --output-on-failure -L e2e

# The suite under AddressSanitizer and UndefinedBehaviorSanitizer (any UB aborts), built with
# clang in the fuzzers' tree (build-fuzz/): the libraries are compiled once for both. Both
# sanitizer suites leave out the tests run under mpirun (label mpi): Debian's Open MPI is not
# instrumented (docs/testing.md).
FUZZ_CONFIGURE = cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_CXX_COMPILER=clang++-14 -DFLEETSIM_FUZZ=ON -DFLEETSIM_BUILD_TESTS=ON -DFLEETSIM_BUILD_BENCH=OFF

# The sanitizer suites leave out, besides the browser, slow and MPI tests, the three tests that
# kill or interrupt a long run and resume it (each runs a 400 to 600 s experiment four times:
# 4 to 9 minutes under TSan). They test process supervision and checkpoints, whose threaded and
# memory paths the shorter checkpoint and supervision tests also take; `make test` runs them.
SANITIZER_SKIP = 'ARunKilledWithKill9Resumes|AKilledProcessPrintsACommand|AnInterruptedRunOnOneProcess'

asan: deps
	$(FUZZ_CONFIGURE)
	cmake --build build-fuzz -j $(JOBS)
	ctest --test-dir build-fuzz --output-on-failure -j $(JOBS) --timeout 600 --repeat after-timeout:2 -LE 'e2e|slow|mpi' -E $(SANITIZER_SKIP)

# ThreadSanitizer reports through the uninstrumented libzmq are suppressed, with the reason,
# in tests/tsan.supp; any other report fails the test.
TSAN_ENV = TSAN_OPTIONS="suppressions=$(CURDIR)/tests/tsan.supp"

tsan: deps
	cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFLEETSIM_SANITIZE=thread \
	  -DFLEETSIM_BUILD_BENCH=OFF
	cmake --build build-tsan -j $(JOBS)
	$(TSAN_ENV) ctest --test-dir build-tsan --output-on-failure -j $(JOBS) --timeout 600 --repeat after-timeout:2 -LE 'e2e|slow|mpi' -E $(SANITIZER_SKIP)

# libFuzzer harnesses (tests/fuzz/, docs/testing.md): each runs FUZZ_SECONDS on a copy of its
# corpus in build-fuzz/fuzz/; fails naming the harness and the reproducer if one crashes.
# FUZZ_SEED=N fixes libFuzzer's seed (CI's gate), 0 picks a random one.
fuzz: deps
	$(FUZZ_CONFIGURE)
	cmake --build build-fuzz -j $(JOBS) --target fuzzers
	FUZZ_SEED=$(FUZZ_SEED) tests/fuzz/run.sh build-fuzz $(FUZZ_SECONDS)

format:
	find include src tests bench -name '*.[ch]pp' | xargs clang-format -i

clean:
	rm -rf $(BUILD) build-tsan build-fuzz
