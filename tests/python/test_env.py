"""fleetsim.Env and its views (docs/python.md, "Environments for learning"): W worlds of one
experiment stepped together, arrays [W, agents, ...] reused at every step, the Gymnasium-style
vector view with next-step autoreset, the PettingZoo-style parallel view, and the same bits for
the same seed and actions whatever the number of worlds and threads."""
import os
import shutil
import tempfile
import threading
import unittest

import numpy as np

import fleetsim

SCENE = """<?xml version="1.0"?>
<fleetsim>
  <framework ticks_per_second="10" length="${length}" seed="11"/>
  <controllers>
    <controller id="learner" type="external"/>
    <controller id="walk" type="random_walk" speed="0.1" turn_probability="0.2"/>
  </controllers>
  <arena size="3,3">
    <distribute count="${agents}" kind="epuck" controller="learner" id_prefix="a" region="-1,-1,1,1"/>
    <distribute count="3" kind="epuck" controller="walk" id_prefix="w" region="-1,-1,1,1"/>
  </arena>
</fleetsim>
"""


# A Lua controller that counts its init() and reset() calls and shows them on its LEDs.
COUNTER = """
inits, resets = 0, 0
function init() inits = inits + 1 end
function reset() resets = resets + 1 end
function step() robot.leds.set_all_colors(resets, inits, 0) end
"""

COUNTED = """<?xml version="1.0"?>
<fleetsim>
  <framework ticks_per_second="10" length="0.3" seed="2"/>
  <controllers>
    <controller id="learner" type="external"/>
    <controller id="count" type="lua" script="count.lua"/>
  </controllers>
  <arena size="3,3">
    <distribute count="2" kind="epuck" controller="learner" id_prefix="a" region="-1,-1,1,1"/>
    <robot id="counter" kind="epuck" controller="count" position="1.2,1.2"/>
  </arena>
</fleetsim>
"""


def scene(directory, length=2, agents=6):
    path = os.path.join(directory, f"env-{length}-{agents}.xml")
    with open(path, "w") as f:
        f.write(SCENE.replace("${length}", str(length)).replace("${agents}", str(agents)))
    return path


class EnvTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="fleetsim-env-")
        self.path = scene(self.dir)

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def make(self, worlds=3, **kw):
        kw.setdefault("observations", ["proximity", "x", "y", "theta"])
        return fleetsim.Env(self.path, worlds, **kw)

    def test_shapes_spaces_and_arrays_reused_in_place(self):
        with self.make(rewards={"target": (0.0, 0.0)}) as env:
            self.assertEqual(env.agents, [f"a{i}" for i in range(6)])  # external robots only
            obs, infos = env.reset(seed=1)
            self.assertEqual(obs.shape, (3, 6, 8 + 3))
            self.assertEqual(env.single_observation_space.shape, (11,))
            self.assertEqual(env.single_action_space.shape, (2,))
            self.assertEqual(env.action_space.shape, (3, 6, 2))
            self.assertEqual(env.single_action_space.dtype, np.float64)
            np.testing.assert_array_equal(env.single_action_space.high, [0.13, 0.13])
            np.testing.assert_array_equal(env.single_action_space.low, [-0.13, -0.13])
            a = env.action_space.sample()
            self.assertTrue(env.action_space.contains(a))
            self.assertFalse(env.action_space.contains(a * 2 + 1))
            self.assertFalse(env.action_space.contains(a[0]))
            obs2, rew, term, trunc, infos = env.step(a)
            self.assertIs(obs2, obs)  # the same memory, overwritten: no copy per step
            self.assertEqual(rew.shape, (3, 6))
            self.assertEqual((term.dtype, trunc.dtype), (np.bool_, np.bool_))
            np.testing.assert_array_equal(infos["tick"], [1, 1, 1])
            # The target term is minus the distance to (0, 0), from the robots' own columns.
            for w in range(3):
                x, y = env.column(w, "x")[:6], env.column(w, "y")[:6]
                np.testing.assert_allclose(rew[w], -np.hypot(x, y), rtol=1e-12)
                np.testing.assert_array_equal(obs[w, :, 8], x)
            obs3 = env.step(a)[0]
            self.assertIs(obs3, obs)

    def test_the_same_seed_and_actions_give_the_same_bits_for_any_worlds_and_threads(self):
        rng = np.random.default_rng(0)
        actions = [rng.uniform(-0.13, 0.13, size=(4, 6, 2)) for _ in range(25)]

        def run(worlds, threads):
            with self.make(worlds, threads=threads) as env:
                env.reset(seed=42)
                out = [env.step(a[:worlds])[0].copy() for a in actions]
                return np.stack(out), [env.state_hash(w) for w in range(worlds)]

        one, h1 = run(4, 1)
        two, h2 = run(4, 2)
        self.assertEqual(one.tobytes(), two.tobytes())
        self.assertEqual(h1, h2)
        self.assertEqual(len(set(h1)), 4)  # different seeds: different worlds
        # World 0 alone is world 0 of four.
        alone, h = run(1, 2)
        self.assertEqual(alone[:, 0].tobytes(), one[:, 0].tobytes())
        self.assertEqual(h[0], h1[0])

    def test_world_w_is_the_run_of_seed_plus_w(self):
        with self.make(2, actions=["differential_drive"]) as env:
            env.reset(seed=7)
            zero = np.zeros(env.action_space.shape)
            for _ in range(10):
                env.step(zero)
            hashes = [env.state_hash(w) for w in range(2)]
        for w in range(2):
            with fleetsim.Simulation(self.path, seed=7 + w, log="") as sim:
                sim.step(10)
                self.assertEqual(sim.state_hash, hashes[w])

    def test_bad_actions_raise_naming_the_robot_and_column_and_nothing_steps(self):
        with self.make(2) as env:
            env.reset(seed=1)
            good = np.zeros(env.action_space.shape)
            for value, what in ((np.nan, "finite"), (np.inf, "finite"), (5.0, "0.13")):
                bad = good.copy()
                bad[1, 4, 1] = value
                with self.assertRaises(ValueError) as e:
                    env.step(bad)
                message = str(e.exception)
                self.assertIn("a4", message)
                self.assertIn("differential_drive", message)
                self.assertIn(what, message)
            with self.assertRaises(ValueError):
                env.step(good[:, :5])
            with self.assertRaises(TypeError):
                env.step(good.astype(str))
            with self.assertRaises(TypeError):
                env.step([[0.0]])
            infos = env.step(good)[4]
            np.testing.assert_array_equal(infos["tick"], [1, 1])  # the refused steps never ran
            x = env.column(1, "x")
            self.assertTrue(np.all(np.isfinite(x)))
        with self.assertRaises(ValueError):
            env.step(good)  # closed
        # A command with no bounds still refuses what is not a finite number.
        with fleetsim.Env(self.path, 1, actions=["turn_cmd"]) as env:
            env.reset(seed=1)
            bad = np.zeros(env.action_space.shape)
            bad[0, 2, 0] = -np.inf
            with self.assertRaises(ValueError) as e:
                env.step(bad)
            self.assertIn("a2", str(e.exception))
            self.assertIn("turn_cmd", str(e.exception))
        with self.assertRaises(KeyError):
            fleetsim.Env(self.path, 1, observations=["proximty"])
        with self.assertRaises(ValueError):
            fleetsim.Env(self.path, 1, actions=["x"])  # not a command
        with self.assertRaises(ValueError):
            fleetsim.Env(self.path, 0)

    def test_seeds_per_world_and_bad_seeds(self):
        with self.make(3, observations=["x", "y"]) as env:
            with self.assertRaises(ValueError):
                env.step(np.zeros(env.action_space.shape))  # before reset
            same, _ = env.reset(seed=[5, 5, 5])
            self.assertEqual(env.seeds, [5, 5, 5])
            self.assertEqual(same[0].tobytes(), same[2].tobytes())  # one start, three times
            first = env.reset(seed=5)[0].copy()
            self.assertEqual(env.seeds, [5, 6, 7])
            self.assertEqual(first[0].tobytes(), same[0].tobytes())
            self.assertNotEqual(first[1].tobytes(), first[0].tobytes())
            for bad, error in (([1, 2], ValueError), (-1, ValueError), ("x", ValueError),
                               (1.5, TypeError)):
                with self.assertRaises(error):
                    env.reset(seed=bad)

    def test_a_second_thread_during_step_gets_an_exception(self):
        big = scene(self.dir, length=100, agents=400)
        with fleetsim.Env(big, 4, threads=1) as env:
            env.reset(seed=1)
            zero = np.zeros(env.action_space.shape)
            errors, stop = [], threading.Event()

            def stepper():
                for _ in range(20):
                    env.step(zero)
                stop.set()

            t = threading.Thread(target=stepper)
            t.start()
            while not stop.is_set():
                try:
                    env.step(zero)
                except RuntimeError as e:
                    errors.append(str(e))
            t.join()
            self.assertTrue(errors)
            self.assertIn("another thread", errors[0])

    def test_next_step_autoreset_as_gymnasium_documents_it(self):
        short = scene(self.dir, length=0.5)  # 5 ticks
        with fleetsim.Env(short, 2, observations=["x", "y"]) as env:
            first, _ = env.reset(seed=3)
            first = first.copy()
            zero = np.zeros(env.action_space.shape)
            for k in range(4):
                _, _, term, trunc, _ = env.step(zero)
                self.assertFalse(trunc.any() or term.any())
            _, _, term, trunc, infos = env.step(zero)
            self.assertTrue(trunc.all())  # the length ends the episode: truncated
            self.assertFalse(term.any())
            obs, rew, term, trunc, infos = env.step(zero + 0.1)  # actions ignored
            self.assertFalse(trunc.any() or term.any())
            np.testing.assert_array_equal(rew, 0)
            np.testing.assert_array_equal(infos["tick"], [0, 0])
            np.testing.assert_array_equal(infos["episode"], [1, 1])
            self.assertFalse(np.array_equal(obs, first))  # the next episode: another seed
            obs, *_ = env.step(zero)
            np.testing.assert_array_equal(env.step(zero)[4]["tick"], [2, 2])

    def test_an_episode_starts_with_the_experiments_reset(self):
        # A Lua robot beside the agents counts its controller's init() and reset() calls into
        # its LED (red: resets, green: inits); the agents' episodes end every 3 ticks.
        with open(os.path.join(self.dir, "count.lua"), "w") as f:
            f.write(COUNTER)
        path = os.path.join(self.dir, "counted.xml")
        with open(path, "w") as f:
            f.write(COUNTED)

        def leds(env, w):
            return env.column(w, "leds")[-1][:2].tolist()  # the counter is the last robot

        with fleetsim.Env(path, 2, observations=["x"]) as env:
            zero = np.zeros(env.action_space.shape)
            env.reset(seed=5)
            env.step(zero)
            self.assertEqual([leds(env, w) for w in range(2)], [[1, 1], [1, 1]])
            # Ticks 2 and 3 end the first episode; then each episode is a step that starts it
            # (the autoreset) and three ticks. Steps 2 to 12, then 13: episode 3's tick 1.
            for _ in range(2 + 4 + 4 + 1):
                env.step(zero)
            infos = env.step(zero)[4]
            np.testing.assert_array_equal(infos["episode"], [3, 3])
            np.testing.assert_array_equal(infos["tick"], [1, 1])
            self.assertEqual([leds(env, w) for w in range(2)], [[4, 1], [4, 1]])
            env.reset(seed=5)
            env.step(zero)
            self.assertEqual(leds(env, 1), [5, 1])  # init() once, at the load, never again

    def test_episodes_after_resets_give_the_same_bits_for_any_worlds_and_threads(self):
        short = scene(self.dir, length=0.4)  # episodes of 4 ticks: resets with new seeds
        rng = np.random.default_rng(3)
        actions = [rng.uniform(-0.13, 0.13, size=(3, 6, 2)) for _ in range(14)]

        def run(worlds, threads):
            with fleetsim.Env(short, worlds, threads=threads, observations=["x", "y"]) as env:
                hashes, obs = [], []
                for again in range(2):
                    env.reset(seed=9)
                    for a in actions:
                        obs.append(env.step(a[:worlds])[0].copy())
                        hashes.append([env.state_hash(w) for w in range(worlds)])
                return np.stack(obs), hashes

        three, h3 = run(3, 2)
        one, h1 = run(1, 1)
        self.assertEqual(three[:, :1].tobytes(), one.tobytes())
        self.assertEqual([h[0] for h in h3], [h[0] for h in h1])
        self.assertEqual(h3[:14], h3[14:])  # reset(seed=9) again: the same episodes
        self.assertEqual(len({h[0] for h in h3[:14]}), 14)  # every tick's world differs
        # Episode e of world w is the run of seed 9 + w + e * K, placed with it: episode 1's
        # first observations are not episode 0's.
        self.assertFalse(np.array_equal(three[4], three[0]))

    def test_vector_view(self):
        with self.make(2) as env:
            v = env.vector()
            self.assertEqual(v.num_envs, 12)
            self.assertEqual(v.metadata["autoreset_mode"], "NextStep")
            obs, infos = v.reset(seed=5)
            self.assertEqual(obs.shape, (12, 11))
            self.assertEqual(v.single_observation_space.shape, (11,))
            self.assertEqual(v.action_space.shape, (12, 2))
            obs, rew, term, trunc, infos = v.step(v.action_space.sample())
            self.assertEqual((rew.shape, term.shape, trunc.shape), ((12,), (12,), (12,)))
            self.assertEqual(infos["tick"].shape, (12,))
            with self.assertRaises(ValueError):
                v.step(np.zeros((11, 2)))

    def test_parallel_view(self):
        short = scene(self.dir, length=0.3)
        env = fleetsim.Env(short, 1, observations=["proximity"], autoreset=False,
                           rewards={"centroid": 1.0})
        p = env.parallel()
        self.assertEqual(p.possible_agents, [f"a{i}" for i in range(6)])
        self.assertEqual(p.agents, [])
        obs, infos = p.reset(seed=2)
        self.assertEqual(set(obs), set(p.possible_agents))
        self.assertEqual(obs["a0"].shape, p.observation_space("a0").shape)
        self.assertTrue(p.observation_space("a0").contains(obs["a0"]))
        for _ in range(3):
            acts = {a: p.action_space(a).sample() for a in p.agents}
            obs, rew, term, trunc, infos = p.step(acts)
            self.assertEqual(set(rew), set(p.possible_agents))
            self.assertIsInstance(rew["a0"], float)
            self.assertLessEqual(rew["a0"], 0.0)  # minus a distance
        self.assertTrue(all(trunc.values()))
        self.assertEqual(p.agents, [])
        with self.assertRaises(ValueError):
            p.step({})
        p.reset(seed=2)
        with self.assertRaises(ValueError):
            p.step({"a0": (0, 0)})  # an action for every live agent
        p.close()

    def test_gymnasiums_own_box_when_it_is_importable(self):
        try:
            import gymnasium
        except ImportError:
            self.skipTest("gymnasium is not installed (not in Debian)")
        with self.make(2) as env:
            self.assertIsInstance(env.single_action_space, gymnasium.spaces.Box)
            v = env.vector()
            obs, _ = v.reset(seed=1)
            self.assertTrue(v.observation_space.contains(obs))

    def test_pettingzoos_parallel_api_test_when_it_is_importable(self):
        try:
            from pettingzoo.test import parallel_api_test
        except ImportError:
            self.skipTest("pettingzoo is not installed (not in Debian)")
        short = scene(self.dir, length=0.5)
        env = fleetsim.Env(short, 1, autoreset=False)
        parallel_api_test(env.parallel(), num_cycles=10)

    def test_rewards_from_python_over_the_arrays(self):
        def spread(env, obs, rewards):
            return -obs[..., 0] ** 2  # any function of the zero-copy observations

        with fleetsim.Env(self.path, 2, observations=["x"], reward_fn=spread) as env:
            env.reset(seed=1)
            obs, rew, *_ = env.step(np.zeros(env.action_space.shape))
            np.testing.assert_array_equal(rew, -obs[..., 0] ** 2)


if __name__ == "__main__":
    unittest.main()


LEARNING = """<?xml version="1.0"?>
<fleetsim>
  <framework ticks_per_second="10" length="2" seed="4"/>
  ${plugins}
  <controllers><controller id="learner" type="external"/></controllers>
  <arena size="3,3">
    <distribute count="5" kind="epuck" controller="learner" id_prefix="a" region="-1,-1,1,1"/>
  </arena>
  <learning>
    <observations columns="x, y theta"/>
    <actions columns="differential_drive"/>
    <reward type="target" weight="2" at="0.5,-0.25"/>
    ${reward}
  </learning>
</fleetsim>
"""


class DeclaredInTheFile(unittest.TestCase):
    """<learning> in the experiment (docs/experiment-format.md): observations, actions and
    reward terms; Python's arguments replace the file's; reward terms from a plug-in library
    (examples/plugins: `progress`)."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="fleetsim-learning-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def write(self, reward="", plugins=""):
        path = os.path.join(self.dir, "learning.xml")
        with open(path, "w") as f:
            f.write(LEARNING.replace("${reward}", reward).replace("${plugins}", plugins))
        return path

    def test_the_files_observations_actions_and_rewards(self):
        with fleetsim.Env(self.write(), 2) as env:
            self.assertEqual(env.observation_columns, ["x", "y", "theta"])
            self.assertEqual(env.action_columns, ["differential_drive"])
            self.assertEqual(env.reward_terms, [("target", 2.0, {"at": "0.5,-0.25"})])
            obs, _ = env.reset(seed=1)
            self.assertEqual(obs.shape, (2, 5, 3))
            a = np.full(env.action_space.shape, 0.1)
            obs, rew, *_ = env.step(a)
            for w in range(2):
                x, y = env.column(w, "x"), env.column(w, "y")
                np.testing.assert_array_equal(obs[w, :, 0], x)
                np.testing.assert_allclose(rew[w], -2 * np.hypot(x - 0.5, y + 0.25), rtol=1e-12)

    def test_pythons_arguments_replace_the_files(self):
        with fleetsim.Env(self.write(), 1, observations=["proximity"],
                          rewards={"centroid": 1.0}) as env:
            self.assertEqual(env.observation_columns, ["proximity"])
            self.assertEqual(env.action_columns, ["differential_drive"])  # the file's
            self.assertEqual(env.reward_terms, [("centroid", 1.0, {})])
            env.reset(seed=1)
            _, rew, *_ = env.step(np.zeros(env.action_space.shape))
            x, y = env.column(0, "x"), env.column(0, "y")
            np.testing.assert_allclose(rew[0], -np.hypot(x - x.mean(), y - y.mean()),
                                       rtol=1e-12)

    def test_bad_reward_terms_from_python_raise(self):
        path = self.write()
        with self.assertRaisesRegex(ValueError, "no reward term 'centriod'.*did you mean"):
            fleetsim.Env(path, 1, rewards={"centriod": 1.0})
        with self.assertRaisesRegex(ValueError, "'target' has no parameter 'to'"):
            fleetsim.Env(path, 1, rewards={"target": {"to": (1, 2)}})
        with self.assertRaisesRegex(ValueError, "radius=wide is not a number"):
            fleetsim.Env(path, 1, rewards={"neighbours": {"radius": "wide"}})
        with self.assertRaisesRegex(ValueError, "is not a point"):
            fleetsim.Env(path, 1, rewards={"target": {"at": "1"}})

    def test_a_reward_term_from_a_plug_in_library(self):
        library = os.environ.get("FLEETSIM_EXAMPLE_PLUGINS")
        if not library or not os.path.exists(library):
            self.skipTest("the example plug-in library is not built (FLEETSIM_EXAMPLE_PLUGINS)")
        path = self.write(reward='<reward type="progress" weight="3" to="-1,1"/>',
                          plugins=f'<plugins><library path="{library}"/></plugins>')
        with fleetsim.Env(path, 2, length=0.3, rewards=None) as env:
            self.assertEqual([t[0] for t in env.reward_terms], ["target", "progress"])
            env.reset(seed=2)
            a = np.full(env.action_space.shape, 0.12)
            for episode_step in range(5):  # 3 ticks, the autoreset, then tick 1 again
                x0, y0 = env.column(0, "x"), env.column(0, "y")
                _, rew, _, _, infos = env.step(a)
                x, y = env.column(0, "x"), env.column(0, "y")
                if infos["tick"][0] == 0:
                    np.testing.assert_array_equal(rew[0], 0)
                    continue
                # progress: how much closer to (-1, 1) since the last step (from tick 0 at
                # an episode's first step: the term's reset)
                progress = np.hypot(x0 + 1, y0 - 1) - np.hypot(x + 1, y - 1)
                target = -np.hypot(x - 0.5, y + 0.25)
                np.testing.assert_allclose(rew[0], 2 * target + 3 * progress, rtol=1e-9,
                                           atol=1e-12)
                self.assertTrue(np.any(progress != 0))


class LearningExample(unittest.TestCase):
    """examples/python/learn_aggregation.py, short: the score on its held-out episode rises."""

    def test_the_evolution_strategy_improves_aggregation(self):
        import importlib.util
        here = os.path.dirname(os.path.abspath(__file__))
        path = os.path.join(here, "..", "..", "examples", "python", "learn_aggregation.py")
        spec = importlib.util.spec_from_file_location("learn_aggregation", path)
        example = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(example)
        lines = []
        first, last, history = example.train(generations=8, half=6, length=10,
                                             report=lines.append)
        self.assertEqual(len(history), 8)
        # Minus the mean distance to the centroid, metres: the robots end up gathered closer
        # than the policy that does not move leaves them (a quarter of the way, at least: 25 to
        # 35 % in the runs measured as the placement and the drive changed).
        self.assertLess(first, 0)
        self.assertGreater(last, first * 3 / 4, lines)
        self.assertGreater(np.mean(history[-3:]), history[0], lines)


class Bench(unittest.TestCase):
    """bench/python/env_bench.py runs and prints its one JSON line (no timing is checked)."""

    def run_bench(self, *args):
        import json
        import subprocess
        import sys
        here = os.path.dirname(os.path.abspath(__file__))
        script = os.path.join(here, "..", "..", "bench", "python", "env_bench.py")
        out = subprocess.run([sys.executable, script, "--worlds", "2", "--robots", "5", *args],
                             capture_output=True, text=True, timeout=120)
        self.assertEqual(out.returncode, 0, out.stderr)
        lines = out.stdout.splitlines()
        self.assertEqual(len(lines), 1, out.stdout)
        return json.loads(lines[0])

    def test_the_bench_prints_one_json_line(self):
        result = self.run_bench("--steps", "3", "--warmup", "1")
        self.assertEqual((result["worlds"], result["robots"], result["steps"]), (2, 5, 3))
        self.assertGreater(result["robot_steps_per_s"], 0)

    def test_the_reset_bench_prints_one_json_line(self):
        result = self.run_bench("--lua", "2", "--resets", "2")
        self.assertEqual((result["benchmark"], result["lua_robots"]), ("env_reset", 2))
        self.assertGreater(result["reset_ms_per_world"], 0)
        self.assertGreater(result["new_run_ms_per_world"], 0)
