"""What a Python program passes to the engine (docs/python.md, "Safety at the boundary"):
commands that are not finite numbers, wrong arguments, a finished simulation, two threads, a
sweep's measure that is a lambda. Each is a Python exception, never a crash nor a robot
corrupted for the rest of the run."""
import os
import shutil
import sys
import tempfile
import threading
import unittest

import numpy as np

import fleetsim

SCENE = """<?xml version="1.0"?>
<fleetsim>
  <framework ticks_per_second="10" length="20" seed="3"/>
  <controllers>
    <controller id="walk" type="random_walk" speed="0.1" turn_probability="0.2"/>
    <controller id="ext" type="external"/>
  </controllers>
  <arena size="6,6">
    <robot id="driven" kind="epuck" controller="ext" position="-2,0" heading="0"/>
    <distribute count="${count}" kind="epuck" controller="walk" id_prefix="w" region="0,-3,3,3"/>
  </arena>
</fleetsim>
"""


class Boundary(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="fleetsim-boundary-")
        self.path = self.write("scene.xml", 20)

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def write(self, name, count):
        p = os.path.join(self.dir, name)
        with open(p, "w") as f:
            f.write(SCENE.replace("${count}", str(count)))
        return p

    def test_a_nan_command_raises_naming_the_robot_and_column_and_the_robot_stays_whole(self):
        for bad in (float("nan"), float("inf"), -float("inf")):
            with fleetsim.Simulation(self.path, log="") as sim:
                r = sim.robot_names().index("driven")
                wheels = sim.column("differential_drive")
                x0 = float(sim.column("x")[r])
                wheels[r] = (0.1, bad)
                with self.assertRaises(ValueError) as e:
                    sim.step()
                self.assertIn("driven", str(e.exception))
                self.assertIn("differential_drive", str(e.exception))
                self.assertEqual(sim.tick, 0)  # nothing of the step ran
                # Finite commands again: the robot moves as if the bad one never came.
                wheels[r] = (0.1, 0.1)
                sim.step(10)
                x = float(sim.column("x")[r])
                self.assertTrue(np.isfinite(x))
                self.assertAlmostEqual(x - x0, 0.1, delta=1e-8)

    def test_a_finished_simulation_refuses_to_step_and_to_hand_out_writable_columns(self):
        sim = fleetsim.Simulation(self.path, log="")
        sim.step()
        sim.finish()
        with self.assertRaises(ValueError) as e:
            sim.step()
        self.assertIn("finished", str(e.exception))
        with self.assertRaises(ValueError):
            sim.run()
        with self.assertRaises(ValueError):
            sim.column("differential_drive")[0] = (0.1, 0.1)  # read-only once finished

    def test_wrong_arguments_raise_python_exceptions(self):
        with fleetsim.Simulation(self.path, log="") as sim:
            with self.assertRaises(ValueError):
                sim.step(-1)
            with self.assertRaises(TypeError):
                sim.step("ten")
            with self.assertRaises(TypeError):
                sim.column(3)
            with self.assertRaises(KeyError):
                sim.column("no_such_column")
        with self.assertRaises(TypeError):
            fleetsim.Simulation(self.path, threads="two")
        with self.assertRaises(ValueError):
            fleetsim.Simulation(self.path, threads=0)
        with self.assertRaises(ValueError):
            fleetsim.Simulation(self.path, threads=10**6)  # not a million threads started
        with self.assertRaises(ValueError):
            fleetsim.Simulation(self.path, length=-1.0)
        with self.assertRaises(ValueError):
            fleetsim.Simulation(self.path, length=float("nan"))

    def test_a_second_thread_during_step_gets_an_exception(self):
        big = self.write("big.xml", 2000)
        with fleetsim.Simulation(big, log="", threads=1) as sim:
            errors, started = [], threading.Event()

            def stepper():
                started.set()
                sim.step(30)

            t = threading.Thread(target=stepper)
            t.start()
            started.wait()
            # While the first thread steps (the GIL released), every use from here raises.
            # (step(0) and the reads change nothing when they do not overlap a step.)
            while t.is_alive():
                for use in (lambda: sim.step(0), lambda: sim.column("x"), lambda: sim.state_hash,
                            lambda: sim.summary()):
                    try:
                        use()
                    except RuntimeError as e:
                        errors.append(str(e))
                    except ValueError:
                        pass  # the run may just have ended
            t.join()
            self.assertTrue(errors, "the second thread never overlapped a step")
            self.assertIn("another thread", errors[0])
            self.assertEqual(sim.tick, 30)  # the first thread's steps all ran

    def test_sweep_takes_a_lambda_with_and_without_cloudpickle(self):
        def run():
            return fleetsim.sweep(self.path, seeds=[1, 2], length=1, workers=2,
                                  measure=lambda sim: {"robots_seen": sim.robot_count * 10})
        rows = run()
        self.assertEqual([r["robots_seen"] for r in rows], [210, 210], rows)
        # Without cloudpickle, a lambda runs in forked processes, without pickling.
        saved = sys.modules.get("cloudpickle")
        sys.modules["cloudpickle"] = None  # `import cloudpickle` now fails
        try:
            rows = run()
        finally:
            if saved is None:
                del sys.modules["cloudpickle"]
            else:
                sys.modules["cloudpickle"] = saved
        self.assertEqual([r["robots_seen"] for r in rows], [210, 210], rows)
        self.assertTrue(all(r["ok"] for r in rows))


class Package(unittest.TestCase):
    def test_the_installed_fleetsim_command_runs_what_the_module_runs(self):
        """In an environment the package is installed in (make test's), `fleetsim` is on its
        PATH, beside its python, and gives the run the module gives."""
        exe = os.path.join(os.path.dirname(sys.executable), "fleetsim")
        if not os.path.exists(exe):
            self.skipTest("fleetsim imported from a build tree, not an installed package")
        import json
        import subprocess
        with tempfile.TemporaryDirectory(prefix="fleetsim-cli-") as d:
            path = os.path.join(d, "scene.xml")
            with open(path, "w") as f:
                f.write(SCENE.replace("${count}", "10"))
            out = subprocess.run([exe, "run", path, "--quiet", "--json", "--log", ""],
                                 capture_output=True, text=True, timeout=120)
            self.assertEqual(out.returncode, 0, out.stderr)
            with fleetsim.Simulation(path, log="") as sim:
                self.assertEqual(json.loads(out.stdout.splitlines()[-1])["state_hash"],
                                 sim.run()["state_hash"])
            # python -m fleetsim is the same program.
            help_text = subprocess.run([sys.executable, "-m", "fleetsim", "--help"],
                                       capture_output=True, text=True, timeout=60).stdout
            self.assertIn("Usage: fleetsim", help_text)

    def test_an_interpreter_without_numpy_is_told_what_to_install(self):
        import subprocess
        code = "import sys; sys.modules['numpy'] = None; import fleetsim"
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("ImportError: fleetsim needs numpy", p.stderr)
        self.assertIn("python3-numpy", p.stderr)

    def test_the_type_stubs_ship_with_the_package_and_name_every_member(self):
        import ast
        from fleetsim import _core
        where = os.path.dirname(fleetsim.__file__)
        self.assertTrue(os.path.exists(os.path.join(where, "py.typed")))
        with open(os.path.join(where, "_core.pyi")) as f:
            tree = ast.parse(f.read())
        stubs = {c.name: {m.name for m in c.body if isinstance(m, ast.FunctionDef)}
                 for c in tree.body if isinstance(c, ast.ClassDef)}
        for name in ("Simulation", "Worlds", "Federate", "Log"):
            members = {m for m in dir(getattr(_core, name)) if not m.startswith("_")}
            self.assertEqual(members - stubs[name], set(), f"{name}: members without stubs")
            self.assertEqual(stubs[name] - members - {"__init__", "__enter__", "__exit__",
                                                       "__len__", "__getitem__"}, set(),
                             f"{name}: stubs of no member")

    def test_help_shows_the_docstrings(self):
        import pydoc
        text = pydoc.render_doc(fleetsim.Simulation, renderer=pydoc.plaintext)
        self.assertIn("Simulates up to `ticks` ticks", text)
        self.assertIn("step(self: fleetsim._core.Simulation, ticks: int = 1) -> int", text)
        self.assertIn("Ticks simulated so far", text)  # properties too


if __name__ == "__main__":
    unittest.main()
