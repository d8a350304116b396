"""fleetsim in Python (docs/python.md).

Simulation  an experiment loaded in this process: step it, read its columns as numpy arrays
            over the engine's memory, set commands of robots whose controller is `external`
Log         a frame log or DEECo log, frame by frame into numpy arrays
sweep       seeds and parameter values over parallel processes, one result table
Federate    a node of a federation played by this program (docs/federate-api.md)
swarm       the messages of a swarm node's flows: poses, readings, commands (swarm.py)
"""
import os
import sys

# Plug-in libraries named in an experiment's <plugins> call back into the engine's symbols,
# which must therefore be global.
_flags = sys.getdlopenflags()
sys.setdlopenflags(_flags | os.RTLD_GLOBAL)
try:
    from ._core import (ExperimentError, Federate, FederateError, Log, RunError,  # noqa: E402
                        Simulation)
finally:
    sys.setdlopenflags(_flags)

from . import swarm  # noqa: E402
from .sweep import format_table, sweep  # noqa: E402

__all__ = ["ExperimentError", "Federate", "FederateError", "Log", "RunError", "Simulation",
           "format_table", "swarm", "sweep"]
