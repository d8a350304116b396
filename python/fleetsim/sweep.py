"""Seeds and parameter sweeps over parallel processes (docs/python.md)."""
import concurrent.futures
import itertools
import multiprocessing
import os
import pickle
import re
import sys
import time

_PLACEHOLDER = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def _one(job):
    """Runs one (seed, values) of a sweep in a worker process; returns its table row."""
    from ._core import Simulation

    path, text, seed, values, length, threads, measure = job
    measure = _unpack(measure)
    row = {"seed": seed, **values}
    start = time.monotonic()
    try:
        filled = None
        if text is not None:
            filled = _PLACEHOLDER.sub(lambda m: str(values[m.group(1)]), text)
        with Simulation(path, text=filled, seed=seed, length=length, threads=threads,
                        log="") as sim:
            summary = sim.run()
            measured = dict(measure(sim)) if measure else {}
        row.update(ok=True, ticks=summary["tick"], robots=summary["robots"],
                   status=summary["status"], state_hash=summary["state_hash"], error="")
        row.update(measured)
    except Exception as e:  # one bad point does not stop the sweep; its row says why
        row.update(ok=False, ticks=0, robots=0, status="", state_hash="", error=str(e).strip())
    row["wall_seconds"] = round(time.monotonic() - start, 3)
    return row


# A measure no pickle can carry, inherited by forked workers instead (see _pack).
_FORKED = {}


def _pack(measure):
    """How a measure reaches the workers: itself when pickle can carry it (a module-level
    function), else cloudpickle's bytes (a lambda, a closure), else, without cloudpickle, a
    key into _FORKED, which workers forked from this process inherit (nothing pickled)."""
    if measure is None:
        return None
    try:
        pickle.dumps(measure)
        return measure
    except Exception:
        pass
    try:
        import cloudpickle
    except ImportError:
        if "fork" not in multiprocessing.get_all_start_methods():
            raise ValueError("sweep: this measure cannot be pickled and this system cannot fork "
                             "(install cloudpickle, or give a module-level function)") from None
        key = ("forked", id(measure))
        _FORKED[key] = measure
        return key
    return ("cloudpickle", cloudpickle.dumps(measure))


def _unpack(packed):
    if isinstance(packed, tuple) and len(packed) == 2 and packed[0] == "cloudpickle":
        return pickle.loads(packed[1])
    if isinstance(packed, tuple) and len(packed) == 2 and packed[0] == "forked":
        return _FORKED[packed]
    return packed


def sweep(path, seeds=(1,), params=None, workers=None, length=None, threads=1,
          measure=None, progress=None):
    """Runs experiment `path` once per seed and per combination of `params`' values.

    params: {"name": [values...]}; the experiment file holds ${name} where a value goes (any
    attribute or text), e.g. speed="${speed}". workers: processes at once (default: the
    machine's cores). length: seconds, overriding the file. measure: a function of the ended
    Simulation returning a dict of figures for the row (a module-level function: it runs in
    the worker). Logs are not written. Returns one row per run, in the order of the
    combinations (seeds innermost), each a dict: seed, the parameters, ok, ticks, robots,
    status, state_hash, error, the measured figures, wall_seconds. A progress bar goes to
    stderr when it is a terminal (progress=True/False forces it).
    """
    params = dict(params or {})
    text = None
    if params:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        used = set(_PLACEHOLDER.findall(text))
        missing = sorted(set(params) - used)
        if missing:
            raise ValueError(f"{path}: no ${{{missing[0]}}} in the file for the parameter "
                             f"'{missing[0]}' (write ${{{missing[0]}}} where its value goes)")
        unset = sorted(used - set(params))
        if unset:
            raise ValueError(f"{path}: ${{{unset[0]}}} has no value (give params="
                             f"{{'{unset[0]}': [...]}})")
    packed = _pack(measure)
    names = list(params)
    combos = [dict(zip(names, v)) for v in itertools.product(*(params[n] for n in names))]
    jobs = [(os.path.abspath(path), text, int(s), c, length, threads, packed)
            for c in combos for s in seeds]
    if not jobs:
        return []
    workers = max(1, min(workers or os.cpu_count() or 1, len(jobs)))
    show = sys.stderr.isatty() if progress is None else progress
    # fork: the workers inherit the loaded module; spawn where fork is not available.
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    try:
        return _run(jobs, workers, method, show)
    finally:
        if isinstance(packed, tuple) and packed[0] == "forked":
            _FORKED.pop(packed, None)


def _run(jobs, workers, method, show):
    """Runs the jobs over `workers` processes; one row per job, in the jobs' order."""
    rows = [None] * len(jobs)
    with concurrent.futures.ProcessPoolExecutor(
            max_workers=workers, mp_context=multiprocessing.get_context(method)) as pool:
        futures = {pool.submit(_one, j): k for k, j in enumerate(jobs)}
        done = 0
        for fut in concurrent.futures.as_completed(futures):
            rows[futures[fut]] = fut.result()
            done += 1
            if show:
                width = 30
                fill = width * done // len(jobs)
                sys.stderr.write(f"\rsweep [{'#' * fill}{'.' * (width - fill)}] "
                                 f"{done}/{len(jobs)} runs")
                sys.stderr.flush()
    if show:
        sys.stderr.write("\n")
    return rows


def format_table(rows, columns=None):
    """The rows of sweep() as an aligned text table (one line per run)."""
    if not rows:
        return ""
    columns = columns or [c for c in rows[0] if c != "error"] + (
        ["error"] if any(r.get("error") for r in rows) else [])
    cells = [[str(c) for c in columns]] + [[str(r.get(c, "")) for c in columns] for r in rows]
    widths = [max(len(line[k]) for line in cells) for k in range(len(columns))]
    return "\n".join("  ".join(v.ljust(w) for v, w in zip(line, widths)).rstrip()
                     for line in cells)
