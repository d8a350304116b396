"""Builds the Python package's compiled parts with CMake (pyproject.toml, docs/python.md).

The package is python/fleetsim plus two files CMake makes: the module `_core` and the
`fleetsim` program (installed inside the package as fleetsim/bin/fleetsim; the `fleetsim`
command on the environment's PATH runs it). By default they are built in build/package with
the tests and benchmarks off. FLEETSIM_BUILD_DIR=<a configured build tree> reuses that tree
instead (it is brought up to date with `cmake --build`), as `make test` does so that installing
into its virtual environment recompiles nothing. CMAKE_BUILD_PARALLEL_LEVEL sets the jobs
(default 2).
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent


def version():
    text = (ROOT / "CMakeLists.txt").read_text()
    return re.search(r"project\(fleetsim VERSION ([0-9.]+)", text).group(1)


class BinaryDistribution(Distribution):
    """A wheel for this platform and interpreter: the package holds compiled code."""

    def has_ext_modules(self):
        return True


class BuildWithCMake(build_py):
    """Copies the pure-Python files, then the module and the program CMake built."""

    def run(self):
        super().run()
        tree = self.cmake_tree()
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", "2")
        subprocess.check_call(["cmake", "--build", str(tree), "-j", jobs, "--target",
                               "fleetsim_python", "fleetsim"])
        suffix = sysconfig.get_config_var("EXT_SUFFIX")  # e.g. .cpython-311-x86_64-linux-gnu.so
        modules = glob.glob(str(tree / "python" / "fleetsim" / "_core*.so"))
        if not modules:
            raise RuntimeError(f"{tree}: no python/fleetsim/_core*.so after the build "
                               "(is pybind11-dev installed? scripts/install-deps.sh)")
        if not any(m.endswith(suffix) for m in modules):
            raise RuntimeError(f"{tree}: the module there ({os.path.basename(modules[0])}) is "
                               f"for another Python than this one ({sys.executable}, {suffix}); "
                               "build with this interpreter (without FLEETSIM_BUILD_DIR)")
        modules = [m for m in modules if m.endswith(suffix)]
        out = Path(self.build_lib) / "fleetsim"
        (out / "bin").mkdir(parents=True, exist_ok=True)
        for m in modules:
            shutil.copy2(m, out / Path(m).name)
        shutil.copy2(tree / "fleetsim", out / "bin" / "fleetsim")

    def cmake_tree(self):
        given = os.environ.get("FLEETSIM_BUILD_DIR")
        if given:
            tree = Path(given).resolve()
            if not (tree / "CMakeCache.txt").exists():
                raise RuntimeError(f"FLEETSIM_BUILD_DIR={given}: not a configured CMake tree "
                                   "(no CMakeCache.txt)")
            return tree
        tree = ROOT / "build" / "package"
        if not (tree / "CMakeCache.txt").exists():
            # The module is built for the interpreter that runs pip (its headers, its ABI).
            args = ["cmake", "-S", str(ROOT), "-B", str(tree), "-DCMAKE_BUILD_TYPE=Release",
                    "-DFLEETSIM_BUILD_TESTS=OFF", "-DFLEETSIM_BUILD_BENCH=OFF",
                    f"-DFLEETSIM_PYTHON3={sys.executable}"]
            if shutil.which("ninja"):
                args += ["-G", "Ninja"]
            if shutil.which("ccache"):
                args += ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"]
            subprocess.check_call(args)
        return tree


setup(
    version=version(),
    packages=["fleetsim"],
    package_dir={"": "python"},
    package_data={"fleetsim": ["*.pyi", "py.typed"]},
    include_package_data=False,
    distclass=BinaryDistribution,
    cmdclass={"build_py": BuildWithCMake},
    # setuptools' own scratch files, away from CMake's build/ tree.
    options={"build": {"build_base": "build/setuptools"}},
)
