#!/usr/bin/env bash
# Installs the package into a fresh virtual environment, as a user would (docs/python.md,
# "Installing"), for the Python tests to run from there rather than from the build tree.
# Usage: install_venv.sh PYTHON SOURCE_DIR BUILD_DIR VENV_DIR
# The environment sees Debian's numpy (--system-site-packages); pip runs offline (--no-index)
# with Debian's setuptools (--no-build-isolation), and FLEETSIM_BUILD_DIR makes the package
# build reuse BUILD_DIR's module and program (nothing is compiled again).
set -euo pipefail
python=$1 source=$2 build=$3 venv=$4
rm -rf "$venv"
"$python" -m venv --system-site-packages "$venv"
FLEETSIM_BUILD_DIR="$build" "$venv/bin/pip" install --quiet --no-index --no-build-isolation \
  --disable-pip-version-check "$source"
# Installed, not the build tree: the tests must import this copy.
"$venv/bin/python" - "$build/python" <<'PY'
import os, sys, fleetsim
where = fleetsim.__file__
if where.startswith(os.path.abspath(sys.argv[1]) + os.sep):
    sys.exit(f"install_venv: fleetsim imports from the build tree ({where})")
print(f"install_venv: fleetsim {where}")
PY
