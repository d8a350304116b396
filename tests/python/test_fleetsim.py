"""The Python module (docs/python.md): an experiment in process, its columns as numpy views,
commands set from Python, logs read into arrays, sweeps over processes. Run by ctest with
PYTHONPATH=<build>/python and FLEETSIM_BIN=<build>/fleetsim."""
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest

import numpy as np

import fleetsim

SCENE = """<?xml version="1.0"?>
<fleetsim>
  <framework ticks_per_second="10" length="${length}" seed="3"/>
  <controllers>
    <controller id="walk" type="random_walk" speed="${speed}" turn_probability="0.2"/>
    <controller id="ext" type="external"/>
  </controllers>
  <arena size="6,6">
    <robot id="driven" kind="epuck" controller="ext" position="-2,0" heading="0"/>
    <distribute count="40" kind="epuck" controller="walk" id_prefix="w" region="0,-3,3,3"/>
  </arena>
</fleetsim>
"""


class Module(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="fleetsim-py-")
        self.template = os.path.join(self.dir, "scene-template.xml")
        with open(self.template, "w") as f:
            f.write(SCENE)
        self.path = self.write("scene.xml", length=3, speed=0.1)

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def write(self, name, **values):
        text = SCENE
        for k, v in values.items():
            text = text.replace("${" + k + "}", str(v))
        p = os.path.join(self.dir, name)
        with open(p, "w") as f:
            f.write(text)
        return p

    def test_columns_are_views_of_the_engine_and_only_commands_are_writable(self):
        with fleetsim.Simulation(self.path, log="") as sim:
            x = sim.column("x")
            self.assertEqual(x.shape, (41,))
            self.assertEqual(x.dtype, np.float64)
            before = x.copy()
            self.assertEqual(sim.step(5), 5)
            self.assertEqual(sim.tick, 5)
            # The same memory, now holding the moved robots: no copy was made.
            self.assertFalse(np.array_equal(before, x))
            self.assertTrue(np.array_equal(x, sim.column("x")))
            self.assertEqual(x.__array_interface__["data"][0],
                             sim.column("x").__array_interface__["data"][0])
            with self.assertRaises(ValueError):
                x[0] = 1.0  # positions are the engine's: read-only
            info = {c["name"]: c for c in sim.columns()}
            self.assertTrue(info["differential_drive"]["writable"])
            self.assertFalse(info["x"]["writable"])
            self.assertEqual(sim.column("differential_drive").shape, (41, 2))
            self.assertEqual(sim.column("leds").shape[-1], 4)  # RGBA
            with self.assertRaises(KeyError) as e:
                sim.column("xx")
            self.assertIn("did you mean 'x'", str(e.exception))

    def test_commands_set_from_python_drive_an_external_robot(self):
        with fleetsim.Simulation(self.path, log="") as sim:
            names = sim.robot_names()
            r = names.index("driven")
            x0 = float(sim.column("x")[r])
            wheels = sim.column("differential_drive")
            wheels[r] = (0.1, 0.1)  # m/s, both wheels: straight ahead (heading 0: +x)
            sim.step(10)  # one second
            # (a tick's motion is single precision: within 1e-7 of the command, relatively)
            self.assertAlmostEqual(float(sim.column("x")[r]) - x0, 0.1, delta=1e-8)
            self.assertAlmostEqual(float(sim.column("y")[r]), 0.0, places=12)
            wheels[r] = (0.0, 0.0)
            x1 = float(sim.column("x")[r])
            sim.step(5)
            self.assertEqual(float(sim.column("x")[r]), x1)

    def test_a_run_gives_the_command_lines_hash_and_log(self):
        log = os.path.join(self.dir, "py.flog")
        with fleetsim.Simulation(self.path, log=log) as sim:
            summary = sim.run()
            final_x = sim.column("x").copy()
            ids = sim.column("id").copy()
        self.assertEqual(summary["tick"], 30)
        cli_log = os.path.join(self.dir, "cli.flog")
        out = subprocess.run([os.environ["FLEETSIM_BIN"], "run", self.path, "--quiet", "--json",
                              "--log", cli_log], check=True, capture_output=True, text=True)
        self.assertEqual(json.loads(out.stdout)["state_hash"], summary["state_hash"])
        with open(log, "rb") as a, open(cli_log, "rb") as b:
            self.assertEqual(a.read(), b.read(), "the log differs from fleetsim run's")
        frames = fleetsim.Log(log)
        self.assertEqual(frames.format, "frames")
        self.assertEqual(len(frames), 31)
        last = frames[-1]
        self.assertEqual(last["tick"], 30)
        order = np.argsort(ids)
        self.assertTrue(np.array_equal(last["id"], ids[order]) or
                        np.array_equal(last["id"], ids))
        by_id = dict(zip(ids.tolist(), final_x.tolist()))
        self.assertEqual([by_id[i] for i in last["id"].tolist()], last["x"].tolist())
        with self.assertRaises(IndexError):
            frames.frame(31)

    def test_a_logs_header_gives_each_kinds_shape_and_rays(self):
        scene = (SCENE.replace("<controllers>", '<kinds><kind name="crate" base="box" '
                               'size="0.3,0.1"/></kinds>\n  <controllers>')
                 .replace('<arena size="6,6">', '<arena size="6,6">\n    <robot id="c0" '
                          'kind="crate" position="2,-2" heading="30"/>')
                 .replace("</fleetsim>", '  <physics><dynamics2d id="d"/></physics>\n</fleetsim>')
                 .replace("${length}", "1").replace("${speed}", "0.1"))
        path = os.path.join(self.dir, "boxes.xml")
        with open(path, "w") as f:
            f.write(scene)
        log = os.path.join(self.dir, "boxes.flog")
        with fleetsim.Simulation(path, log=log) as sim:
            sim.run()
        h = fleetsim.Log(log).header
        crate = h["kind_shapes"][h["kinds"].index("crate")]
        self.assertEqual(crate["shape"], "box")
        self.assertEqual(crate["half_extents"], (0.15, 0.05))
        epuck = h["kind_shapes"][h["kinds"].index("epuck")]
        self.assertEqual(epuck["shape"], "circle")
        self.assertIsNone(epuck["half_extents"])
        self.assertEqual([r["column"] for r in epuck["rays"]], ["proximity"])
        self.assertEqual(len(epuck["rays"][0]["angles"]), 8)
        self.assertEqual(epuck["rays"][0]["range"], 0.1)
        # A log of the format before shapes: every kind a circle.
        old = fleetsim.Log(os.path.join(os.path.dirname(__file__), "..", "data",
                                        "frame-log-v2.flog")).header
        self.assertEqual({s["shape"] for s in old["kind_shapes"]}, {"circle"})

    def test_a_deeco_log_reads_into_arrays(self):
        log = os.path.join(self.dir, "run.log")
        with fleetsim.Simulation(self.path, log=log, log_format="deeco") as sim:
            sim.run()
            x = sim.column("x").copy()
        d = fleetsim.Log(log)
        self.assertEqual(d.format, "deeco")
        self.assertEqual(len(d), 31)
        self.assertEqual(sorted(np.round(d[-1]["x"], 3).tolist()), sorted(np.round(x, 3).tolist()))

    def test_bad_files_list_every_error_with_its_line(self):
        bad = os.path.join(self.dir, "bad.xml")
        with open(bad, "w") as f:
            f.write(SCENE.replace("${length}", "-1").replace("${speed}", "0.1")
                    .replace('type="external"', 'type="externl"'))
        with self.assertRaises(fleetsim.ExperimentError) as e:
            fleetsim.Simulation(bad)
        text = str(e.exception)
        self.assertIn("bad.xml:3: error:", text)
        self.assertIn("bad.xml:6: error: unknown controller type 'externl'", text)
        with self.assertRaises(ValueError):
            fleetsim.Simulation(self.path, log_format="csv")

    def test_a_sweep_runs_seeds_and_values_in_parallel_into_one_table(self):
        rows = fleetsim.sweep(self.template, seeds=[1, 2], params={"speed": [0.05, 0.1],
                                                                   "length": [2]}, workers=2)
        self.assertEqual([(r["speed"], r["seed"]) for r in rows],
                         [(0.05, 1), (0.05, 2), (0.1, 1), (0.1, 2)])
        for r in rows:
            self.assertTrue(r["ok"], r["error"])
            self.assertEqual(r["ticks"], 20)
        # Each row is the run one process gives for its seed and values.
        one = self.write("one.xml", length=2, speed=0.1)
        with fleetsim.Simulation(one, seed=2, log="") as sim:
            self.assertEqual(sim.run()["state_hash"], rows[3]["state_hash"])
        self.assertEqual(len({r["state_hash"] for r in rows}), 4)
        table = fleetsim.format_table(rows).splitlines()
        self.assertEqual(len(table), 5)
        self.assertIn("state_hash", table[0])
        with self.assertRaises(ValueError) as e:
            fleetsim.sweep(self.template, params={"speed": [1], "sped": [2], "length": [1]})
        self.assertIn("sped", str(e.exception))
        with self.assertRaises(ValueError) as e:
            fleetsim.sweep(self.template, params={"speed": [1]})
        self.assertIn("${length} has no value", str(e.exception))
        # A point that fails says why in its row; the others still run.
        rows = fleetsim.sweep(self.template, seeds=[1], params={"speed": [0.1, "fast"],
                                                                "length": [1]}, workers=2)
        self.assertTrue(rows[0]["ok"])
        self.assertFalse(rows[1]["ok"])
        self.assertIn("speed", rows[1]["error"])


class SwarmMessages(unittest.TestCase):
    """fleetsim.swarm: a swarm node's messages (docs/federation-format.md, "Swarm nodes")."""

    def test_the_layouts_are_the_documented_ones_and_bad_messages_are_refused(self):
        swarm = fleetsim.swarm
        poses = swarm.encode_poses({"a": (1.0, 2.0, 3.0, 0.5)})
        self.assertEqual(len(poses), 4 + 4 + 1 + 32)
        self.assertEqual(swarm.decode_poses(poses), {"a": swarm.Pose(1.0, 2.0, 3.0, 0.5)})
        command = swarm.encode_commands({"differential_drive": (0.1, -0.1),
                                         "leds": bytes((255, 0, 0, 255))})
        self.assertEqual(command, struct.pack("<I", 2)
                         + struct.pack("<I", 18) + b"differential_drive"
                         + struct.pack("<I", 16) + struct.pack("<2d", 0.1, -0.1)
                         + struct.pack("<I", 4) + b"leds" + struct.pack("<I", 4) + b"\xff\0\0\xff")
        # A command that is not a finite number never leaves Python.
        for bad in (float("nan"), float("inf")):
            with self.assertRaises(ValueError) as e:
                swarm.encode_commands({"differential_drive": (0.1, bad)})
            self.assertIn("differential_drive", str(e.exception))
        # An e-puck's readings: proximity (8 rays), then collision with one contact.
        readings = struct.pack("<qI", 7, 2)
        for name, values, angles in (("proximity", [0.5] * 8, [0.25] * 8),
                                     ("collision", [], [1.5])):
            readings += (struct.pack("<I", len(name)) + name.encode()) * 2
            readings += struct.pack("<Bf", 1, 0.0)
            readings += struct.pack(f"<I{len(values)}f", len(values), *values)
            readings += struct.pack(f"<I{len(angles)}f", len(angles), *angles)
            readings += struct.pack("<III", 0, 0, 0)
        self.assertEqual(len(readings), 178 + 4)  # docs/federation-format.md: 178, 4 a contact
        decoded = swarm.decode_readings(readings)
        self.assertEqual(decoded.tick, 7)
        self.assertEqual(list(decoded.sensors), ["proximity", "collision"])
        self.assertEqual(decoded.sensors["proximity"].values, [0.5] * 8)
        self.assertEqual(decoded.sensors["collision"].angles, [1.5])
        for message, decode in ((poses, swarm.decode_poses), (readings, swarm.decode_readings)):
            for cut in range(len(message)):
                with self.assertRaises(ValueError):
                    decode(message[:cut])
            with self.assertRaises(ValueError):
                decode(message + b"\0")


class Examples(unittest.TestCase):
    """examples/python/: each runs as a user runs it and does what it says."""

    def run_example(self, name, *args):
        root = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "python")
        with tempfile.TemporaryDirectory(prefix="fleetsim-py-") as d:
            return subprocess.run([sys.executable, os.path.join(root, name), *args], cwd=d,
                                  capture_output=True, text=True, timeout=300)

    def test_steer_drives_its_robot_to_the_goal_through_the_crowd(self):
        out = self.run_example("steer.py")
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        self.assertIn("reached (2.5, 2.5) at t = ", out.stdout)

    def test_sweep_prints_one_table_and_faster_robots_spread_further(self):
        out = self.run_example("sweep.py", "--seeds", "1", "--workers", "2")
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        lines = out.stdout.splitlines()
        self.assertTrue(lines[0].startswith("speed"), out.stdout)
        self.assertEqual(sum(1 for line in lines if "True" in line), 4, out.stdout)
        m = re.match(r"mean distance: ([0-9.]+) m at 0.05 m/s, ([0-9.]+) m at 0.1 m/s", lines[-1])
        self.assertIsNotNone(m, out.stdout)
        slow, fast = float(m.group(1)), float(m.group(2))
        self.assertGreater(fast, slow)

    def test_a_python_federate_gives_the_built_in_nodes_traces_twice(self):
        root = os.path.join(os.path.dirname(__file__), "..", "..", "examples")
        fleetsim_bin = os.environ["FLEETSIM_BIN"]
        with tempfile.TemporaryDirectory(prefix="fleetsim-py-") as d:
            subprocess.run([fleetsim_bin, "launch",
                            os.path.join(root, "federations", "heterogeneous_rates.xml"),
                            "--quiet", "--trace", os.path.join(d, "ref")], check=True)
            for run in range(2):
                out = subprocess.run([fleetsim_bin, "launch",
                                      os.path.join(root, "python", "spring.xml"),
                                      # both transports between processes: the same bits
                                      "--transport", ("zmq", "shm")[run], "--jitter-us", "200",
                                      "--quiet",
                                      "--trace", os.path.join(d, f"py{run}")],
                                     capture_output=True, text=True, timeout=300)
                self.assertEqual(out.returncode, 0, out.stderr)
                self.assertIn("spring: t = 2 s, x = ", out.stderr)
                for node in ("dynamics", "controller", "camera"):
                    with open(os.path.join(d, "ref", node + ".trace"), "rb") as a, \
                            open(os.path.join(d, f"py{run}", node + ".trace"), "rb") as b:
                        ref = a.read()
                        self.assertGreater(len(ref), 1000)
                        self.assertEqual(ref, b.read(), f"{node}'s trace differs")

    def launch_swarm_example_twice(self, federation, experiment, program, nodes,
                                   runs=(("zmq", 1), ("shm", 1))):
        """Launches examples/python/FEDERATION in one place (the log's header names the
        experiment), once per (transport, processes) of `runs` (by default over ZeroMQ then
        shared memory; processes="N" on the swarm node), with jitter; checks that the nodes'
        traces and the swarm's frame log are the same bits. Returns the log and each run's
        output."""
        root = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "python")
        results = []
        with tempfile.TemporaryDirectory(prefix="fleetsim-py-") as d:
            for f in (federation, experiment, program):
                shutil.copy(os.path.join(root, f), d)
            with open(os.path.join(root, federation)) as f:
                text = f.read()
            log_path = os.path.join(d, experiment.replace(".xml", ".flog"))
            for transport, processes in runs:
                node = f'experiment="{experiment}"'
                self.assertIn(node, text)
                with open(os.path.join(d, federation), "w") as f:
                    f.write(text.replace(node, f'{node} processes="{processes}"'))
                out = subprocess.run([os.environ["FLEETSIM_BIN"], "launch", federation,
                                      "--transport", transport,
                                      "--jitter-us", "300", "--trace", "traces"],
                                     cwd=d, capture_output=True, text=True, timeout=300)
                self.assertEqual(out.returncode, 0, out.stderr)
                files = {}
                for path in [os.path.join(d, "traces", n + ".trace") for n in nodes] + [log_path]:
                    with open(path, "rb") as f:
                        files[path] = f.read()
                results.append((files, out))
            log = fleetsim.Log(log_path)
            frames = [log[k] for k in range(len(log))]
        for run in results[1:]:
            self.assertEqual(results[0][0], run[0], "the traces or the frame log differ")
        # The swarm node's summary, its world's state hash included, is the same too.
        summaries = [re.search(r"node swarm: .*", out.stdout) for _, out in results]
        self.assertTrue(all(summaries), [out.stdout for _, out in results])
        self.assertEqual(len({m.group(0) for m in summaries}), 1, [m.group(0) for m in summaries])
        return log.header, frames, [out for _, out in results]

    def test_a_python_flight_model_flies_a_robot_in_a_swarm_run_the_same_bits_twice(self):
        """Also with the swarm on 2 processes (the ground and the air regions): the same bits."""
        header, frames, outs = self.launch_swarm_example_twice(
            "quadrotor-federation.xml", "quadrotor.xml", "quadrotor_federate.py",
            ("swarm", "flight"), runs=(("zmq", 1), ("shm", 1), ("shm", 2), ("zmq", 2)))
        self.assertEqual(len(frames), 300, "ticks 0 to 299: the last message is at 29.9 s")
        first, last = frames[0], frames[-1]
        # The drone took off from (-3, -3) and hovers 1.5 m above the ground robots' centre.
        ids = header["robots"]
        drone = ids.index("drone")
        self.assertEqual(first["z"][drone], 0.0)
        self.assertAlmostEqual(last["z"][drone], 1.5, delta=0.05)
        ground = [i for i in range(len(ids)) if i != drone]
        for axis in ("x", "y"):
            centre = float(np.mean(last[axis][ground]))
            self.assertAlmostEqual(float(last[axis][drone]), centre, delta=0.2)
        self.assertIn("node swarm: consumed 300, emitted 300, state", outs[0].stdout)

    def test_a_python_controller_steers_a_robot_of_a_swarm_run_by_its_readings_twice(self):
        """rover_federate.py gets its robot's sensor readings and sends wheel speeds and a LED
        colour (docs/federate-api.md): the same traces and frame log on both transports."""
        header, frames, outs = self.launch_swarm_example_twice(
            "rover-federation.xml", "rover.xml", "rover_federate.py", ("swarm", "pilot"))
        said = [re.search(r"pilot: 199 readings, (\d+) with an obstacle in sight.*", o.stderr)
                for o in outs]
        self.assertIsNotNone(said[0], outs[0].stderr)
        self.assertEqual(said[0].group(0), said[1].group(0) if said[1] else None)
        self.assertGreater(int(said[0].group(1)), 10)
        # It drove (the swarm's physics moved it by its wheel speeds), and its LED turned red
        # while it avoided something, green otherwise.
        rover = header["robots"].index("rover")
        path = np.array([(f["x"][rover], f["y"][rover]) for f in frames])
        self.assertGreater(float(np.sum(np.linalg.norm(np.diff(path, axis=0), axis=1))), 1.0)
        colours = {tuple(int(c) for c in f["leds"][rover][:3]) for f in frames[2:]}
        self.assertEqual(colours, {(255, 0, 0), (0, 255, 0)})

    def test_a_python_event_detector_gives_the_same_traces_on_both_transports(self):
        root = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "python")
        traces = []
        with tempfile.TemporaryDirectory(prefix="fleetsim-py-") as d:
            for run in range(2):
                out = subprocess.run([os.environ["FLEETSIM_BIN"], "launch",
                                      os.path.join(root, "event_detector.xml"),
                                      "--transport", ("zmq", "shm")[run], "--jitter-us", "200",
                                      "--trace", os.path.join(d, f"run{run}")],
                                     capture_output=True, text=True, timeout=300)
                self.assertEqual(out.returncode, 0, out.stderr)
                self.assertRegex(out.stderr, r"detector: [1-9][0-9]* alarms")
                files = {}
                for node in ("clock", "detector", "sink"):
                    with open(os.path.join(d, f"run{run}", node + ".trace")) as f:
                        files[node] = f.read()
                traces.append(files)
        self.assertEqual(traces[0], traces[1], "the traces differ between ZeroMQ and shm")
        detector = traces[0]["detector"]
        # Reactions at a tick's own timestamp, null messages, observed levels.
        self.assertIn("consume tick 10000000 ", detector)
        self.assertIn("emit alarm 10000000 ", detector)
        self.assertRegex(detector, r"emit alarm [0-9]+ [0-9]+ [0-9a-f]{16} null")
        self.assertIn("consume level ", detector)

    def test_event_flows_refuse_misuse_from_python(self):
        path = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "python",
                            "event_detector.xml")
        with tempfile.TemporaryDirectory(prefix="fleetsim-py-") as d:
            self.misuse(fleetsim.Federate(path, "detector", ipc_dir=d, quiet=True))

    def misuse(self, fed):
        with self.assertRaises(fleetsim.FederateError) as e:
            fed.update("alarm", b"")
        self.assertIn("flow 'alarm' is an event flow", str(e.exception))
        with self.assertRaises(fleetsim.FederateError) as e:
            fed.observe("tick")
        self.assertIn("flow 'tick' is not an observation flow", str(e.exception))
        fed.send_event("alarm", 5_000_000, b"x")
        with self.assertRaises(fleetsim.FederateError) as e:
            fed.send_event("alarm", 5_000_000, b"y")
        self.assertIn("send_event at 5000000 ns is below its lookahead bound 5000001 ns",
                      str(e.exception))

    def test_a_federate_that_cannot_join_says_why(self):
        path = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "python",
                            "spring.xml")
        with self.assertRaises(fleetsim.FederateError) as e:
            fleetsim.Federate(path, "dynamix")
        self.assertIn("did you mean 'dynamics'", str(e.exception))
        with self.assertRaises(fleetsim.FederateError) as e:
            fleetsim.Federate.from_command_line(["spring_federate.py", path])
        self.assertIn("--name", str(e.exception))


if __name__ == "__main__":
    sys.exit(unittest.main())
