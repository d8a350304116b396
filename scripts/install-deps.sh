#!/usr/bin/env bash
# Installs every Debian package fleetsim's build, tests, benchmarks and examples need.
# Idempotent: only missing packages are installed, and `apt-get update` runs only then.
# Usage: scripts/install-deps.sh [--no-browser] [--demo]
#   --no-browser  skips chromium and the npm packages (the viewer's browser tests)
#   --demo        only what configuring and building the program needs (`make demo`): no
#                 browser, npm, Open MPI, Python, ffmpeg, clang or benchmark library, which
#                 `make test` installs (and then configures again, so the build finds them)
set -euo pipefail

want_browser=1
demo_only=0
for arg in "$@"; do
  case "$arg" in
    --no-browser) want_browser=0 ;;
    --demo) demo_only=1; want_browser=0 ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    *) echo "install-deps.sh: unknown option '$arg' (try --help)" >&2; exit 2 ;;
  esac
done

# What configuring and building the program needs (CMakeLists.txt's REQUIRED packages, and
# GoogleTest, which the configure step asks for while the tests are on).
packages=(
  build-essential g++ cmake ninja-build pkg-config make git
  libpugixml-dev        # experiment, federation and view files (XML)
  libzmq3-dev cppzmq-dev # distributed transport
  libpng-dev            # bitmap fields, and fleetsim render's pictures
  libzstd-dev           # frame log compression
  libcli11-dev          # command line
  libfmt-dev            # formatting
  nlohmann-json3-dev    # JSON summaries and benchmark output
  libcpp-httplib-dev    # viewer HTTP server
  liblua5.4-dev         # Lua controllers (src/lua links liblua5.4-c++, the build compiled as C++)
  libbox2d-dev          # the dynamics2d physics engine (rigid bodies)
  cyclonedds-dev cyclonedds-tools # the ROS 2 bridge over DDS (docs/ros2.md; idlc generates its types)
  libsodium-dev         # the ROS 2 bridge's type hashes (SHA-256)
  libgtest-dev libgmock-dev
)
# The rest: the tests, benchmarks, fuzzers, the Python module and the optional features.
if [[ $demo_only == 0 ]]; then
  packages+=(
  libopenmpi-dev openmpi-bin # runs on a cluster: mpirun -n P fleetsim run ... (docs/distributed.md)
  ffmpeg                # fleetsim render --video (encodes the raw frames fleetsim pipes to it)
  pybind11-dev python3-dev python3-numpy # the Python module (docs/python.md)
  python3-setuptools python3-wheel python3-build python3-venv python3-pip # the Python package: pip install ., wheels, make test's venv
  python3-cloudpickle   # sweep() sends lambdas to its workers (its tests also run without it)
  libbenchmark-dev
  libxml2-utils         # xmllint: the test that every XML file the project ships is well-formed
  clang-14 libclang-rt-14-dev # fuzzers (make fuzz): libclang-rt-14-dev has libFuzzer, ASan, UBSan
  )
fi
if [[ $want_browser == 1 ]]; then
  packages+=(chromium nodejs)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi

if (( ${#missing[@]} > 0 )); then
  echo "install-deps: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# npm (for the browser tests) ships with nodesource's nodejs but is a separate Debian package.
if [[ $want_browser == 1 ]] && ! command -v npm >/dev/null 2>&1; then
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends npm >/dev/null
fi

# playwright-core for the viewer's browser tests, from the committed lockfile.
root="$(cd "$(dirname "$0")/.." && pwd)"
if [[ $want_browser == 1 && -f "$root/tests/e2e/package-lock.json" ]]; then
  if [[ ! -d "$root/tests/e2e/node_modules/playwright-core" ]]; then
    (cd "$root/tests/e2e" && npm ci --no-audit --no-fund --loglevel=error)
  fi
fi
echo "install-deps: all dependencies present"
