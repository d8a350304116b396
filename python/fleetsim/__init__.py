"""fleetsim in Python (docs/python.md).

Simulation  an experiment loaded in this process: step it, read its columns as numpy arrays
            over the engine's memory, set commands of robots whose controller is `external`
Log         a frame log or DEECo log, frame by frame into numpy arrays
sweep       seeds and parameter values over parallel processes, one result table
Federate    a node of a federation played by this program (docs/federate-api.md)
swarm       the messages of a swarm node's flows: poses, readings, commands (swarm.py)
Env         W worlds of one experiment stepped together, for learning (env.py)
"""
import os
import sys

# Every array the module hands out is a numpy array: say what to install before anything else
# fails on it.
try:
    import numpy  # noqa: F401
except ImportError as e:
    raise ImportError(
        f"fleetsim needs numpy, which this interpreter ({sys.executable}) cannot import: "
        "on Debian `apt-get install python3-numpy` and use /usr/bin/python3, or a virtual "
        "environment made with `python3 -m venv --system-site-packages`; elsewhere "
        "`pip install numpy`", name="numpy") from e

# Plug-in libraries named in an experiment's <plugins> call back into the engine's symbols,
# which must therefore be global.
_flags = sys.getdlopenflags()
sys.setdlopenflags(_flags | os.RTLD_GLOBAL)
try:
    from ._core import (ExperimentError, Federate, FederateError, Log, RunError,  # noqa: E402
                        Simulation)
finally:
    sys.setdlopenflags(_flags)

from . import spaces, swarm  # noqa: E402
from .env import Env, ParallelView, VectorView  # noqa: E402
from .sweep import format_table, sweep  # noqa: E402

__all__ = ["Env", "ExperimentError", "Federate", "FederateError", "Log", "ParallelView",
           "RunError", "Simulation", "VectorView", "format_table", "spaces", "swarm", "sweep"]
