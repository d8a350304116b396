"""Environments for learning (docs/python.md, "Environments for learning").

Env           W worlds of one experiment in this process, stepped together in parallel (C++,
              the GIL released): observations, rewards, terminations and truncations are arrays
              [W, agents, ...] the engine overwrites in place at each step (no copy).
VectorView    the same as a Gymnasium vector environment (gymnasium.vector.VectorEnv's
              interface, next-step autoreset) of W * agents sub-environments, one per robot.
ParallelView  one world as a PettingZoo ParallelEnv (per-agent dicts).

The agents are the robots whose controller is `external`. Neither Gymnasium nor PettingZoo is
needed (neither is in Debian): the interfaces are written from their documentation; when
gymnasium is importable its spaces.Box is used.
"""
import os

import numpy as np

from . import _core
from .spaces import box


def _text(value):
    """A parameter's value as the experiment file would write it: numbers exactly (repr), a
    pair or list of numbers as "a,b"."""
    if isinstance(value, (tuple, list, np.ndarray)):
        return ",".join(_text(v) for v in value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float, np.integer, np.floating)):
        return repr(float(value)) if isinstance(value, (float, np.floating)) else str(int(value))
    return str(value)


def _reward_terms(rewards):
    """{"target": (x, y) | {"at": (x, y), "weight": w}, "centroid": w, "collision": w,
    "neighbours": radius | {"radius": r, "weight": w}, "NAME": w | {"weight": w, param: value}}
    -> [(type, weight, {parameter: text})]; None stays None (the experiment's terms)."""
    if rewards is None:
        return None
    terms = []
    for name, spec in rewards.items():
        if isinstance(spec, dict):
            params = dict(spec)
            weight = params.pop("weight", 1.0)
        elif name == "target":
            params, weight = {"at": spec}, 1.0
        elif name == "neighbours":
            params, weight = {"radius": spec}, 1.0
        else:
            params, weight = {}, spec
        terms.append((str(name), float(weight), {str(k): _text(v) for k, v in params.items()}))
    return terms


class Env:
    """W worlds of the experiment `path`, for learning.

    observations: robot column names, concatenated per agent (sensor columns such as
    "proximity", body columns such as "x", "y", "theta"). actions: command column names
    (default: the wheels, "differential_drive"). rewards: reward terms computed in C++ after
    each step, summed ({"target": (x, y)}: minus the distance to a point; {"centroid": w}: minus
    w times the distance to the world's agents' centroid; {"collision": w}: -w while
    colliding; {"neighbours": radius}: +1 per other agent within radius; {"NAME": {"weight": w,
    parameter: value}}: a reward plug-in's term). observations, actions and rewards, when not
    given, are those of the experiment's <learning> element (then proximity, the wheels and no
    reward); given, they replace the file's. reward_fn(env,
    observations, rewards) -> [W, agents]: rewards computed in Python instead (the arrays are
    the engine's, zero-copy). threads: workers stepping the worlds (default: the machine's
    cores, at most W). seed: world w's first episode runs seed + w (default: the file's), or
    one seed per world.
    length: seconds per episode (default: the file's; the end truncates). autoreset: a world
    whose episode ended starts the next at the following step (Gymnasium's next-step mode).
    """

    metadata = {"autoreset_mode": "NextStep", "render_modes": []}

    def __init__(self, path, worlds=1, *, observations=None, actions=None, rewards=None,
                 reward_fn=None, threads=None,
                 seed=None, length=None, text=None, autoreset=True):
        if isinstance(observations, str) or isinstance(actions, str):
            raise TypeError("observations and actions are lists of column names")
        threads = threads if threads is not None else max(1, min(int(worlds),
                                                                 os.cpu_count() or 1))
        self._worlds = _core.Worlds(
            str(path), text=text, worlds=int(worlds), threads=threads,
            observations=None if observations is None else list(observations),
            actions=None if actions is None else list(actions),
            rewards=_reward_terms(rewards), autoreset=autoreset, length=length, seed=seed)
        self._reward_fn = reward_fn
        self._rewards = None
        w = self._worlds
        self.num_worlds = w.worlds
        self.agents = list(w.agent_names)
        self.num_agents = len(self.agents)
        self.obs_dim, self.action_dim = w.obs_dim, w.action_dim
        self.observation_columns = list(w.observation_columns)
        self.action_columns = list(w.action_columns)
        self.reward_terms = [(t, wt, dict(p)) for t, wt, p in w.reward_terms]
        self.autoreset = autoreset
        low, high = np.asarray(w.action_low), np.asarray(w.action_high)
        self.single_observation_space = box(-np.inf, np.inf, (self.obs_dim,), np.float64)
        self.single_action_space = box(low, high, (self.action_dim,), np.float64)
        shape = (self.num_worlds, self.num_agents)
        self.observation_space = box(-np.inf, np.inf, shape + (self.obs_dim,), np.float64)
        self.action_space = box(np.broadcast_to(low, shape + (self.action_dim,)),
                                np.broadcast_to(high, shape + (self.action_dim,)),
                                shape + (self.action_dim,), np.float64)

    def reset(self, seed=None, options=None):
        """Every world from its start -> (observations, infos): the experiment's reset
        (controllers' and loop functions' reset; the robots placed anew with the seed). seed:
        an int s (world w runs seed s + w), a sequence of one seed per world, or None (the
        previous reset's seeds; at first the file's seed s, world w s + w)."""
        if isinstance(seed, (int, np.integer)):
            seed = int(seed)
            if seed < 0:
                raise ValueError(f"seed must be >= 0, not {seed}")
            self.action_space.seed(seed)
        elif seed is not None:
            seed = [int(s) for s in seed]
            if any(s < 0 for s in seed):
                raise ValueError("seeds must be >= 0")
        obs, infos = self._worlds.reset(seed)
        return obs, infos

    def step(self, actions):
        """actions [W, agents, action_dim] -> (observations, rewards, terminations,
        truncations, infos); arrays [W, agents, ...] overwritten by the next step (copy what
        you keep). A non-finite or out-of-bounds action raises ValueError naming the world,
        the robot and the column, and no world steps."""
        obs, rewards, term, trunc, infos = self._worlds.step(actions)
        if self._reward_fn is not None:
            if self._rewards is None:
                self._rewards = np.zeros(rewards.shape)
            np.copyto(self._rewards, self._reward_fn(self, obs, rewards))
            self._rewards[infos["tick"] == 0] = 0.0  # a world that just started again: 0
            rewards = self._rewards
        return obs, rewards, term, trunc, infos

    def column(self, world, name):
        """Column `name` of every robot of world `world` (a copy)."""
        return self._worlds.column(world, name)

    def state_hash(self, world):
        """World `world`'s state hash, as Simulation.state_hash."""
        return self._worlds.state_hash(world)

    @property
    def seeds(self):
        """Each world's seed for its first episode after reset."""
        return self._worlds.seeds

    @property
    def length_ticks(self):
        return self._worlds.length_ticks

    def close(self):
        self._worlds.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def vector(self):
        """This Env as a Gymnasium vector environment of W * agents sub-environments."""
        return VectorView(self)

    def parallel(self, world=0):
        """World `world` of this Env as a PettingZoo ParallelEnv (needs autoreset=False)."""
        return ParallelView(self, world)


class VectorView:
    """An Env as gymnasium.vector.VectorEnv documents it: num_envs = W * agents
    sub-environments, one per robot (row w * agents + i), with single_observation_space and
    single_action_space, batched observation_space and action_space, and next-step autoreset:
    after a sub-environment's episode ends, its next step() returns its first observation,
    reward 0 and both flags false, ignoring its action. All robots of a world end together."""

    metadata = {"autoreset_mode": "NextStep", "render_modes": []}
    render_mode = None

    def __init__(self, env):
        if not env.autoreset:
            raise ValueError("a vector view needs an Env made with autoreset=True")
        self.env = env
        self.num_envs = env.num_worlds * env.num_agents
        self.single_observation_space = env.single_observation_space
        self.single_action_space = env.single_action_space
        self.observation_space = box(-np.inf, np.inf, (self.num_envs, env.obs_dim), np.float64)
        self.action_space = box(np.broadcast_to(env.single_action_space.low,
                                                (self.num_envs, env.action_dim)),
                                np.broadcast_to(env.single_action_space.high,
                                                (self.num_envs, env.action_dim)),
                                (self.num_envs, env.action_dim), np.float64)

    def _flat(self, infos):
        return {k: np.repeat(v, self.env.num_agents) for k, v in infos.items()}

    def reset(self, *, seed=None, options=None):
        obs, infos = self.env.reset(seed=seed, options=options)
        if isinstance(seed, (int, np.integer)):
            self.action_space.seed(int(seed))
        return obs.reshape(self.num_envs, -1), self._flat(infos)

    def step(self, actions):
        a = np.asarray(actions)
        if a.shape != (self.num_envs, self.env.action_dim):
            raise ValueError(f"actions must have shape ({self.num_envs}, "
                             f"{self.env.action_dim}), not {a.shape}")
        obs, rew, term, trunc, infos = self.env.step(
            a.reshape(self.env.num_worlds, self.env.num_agents, -1))
        n = self.num_envs
        return (obs.reshape(n, -1), rew.reshape(n), term.reshape(n), trunc.reshape(n),
                self._flat(infos))

    def close(self):
        self.env.close()

    @property
    def unwrapped(self):
        return self


class ParallelView:
    """One world of an Env as pettingzoo.ParallelEnv documents it: possible_agents and agents
    (robot ids; agents empties when the episode ends), observation_space(agent),
    action_space(agent), reset(seed, options) -> (observations, infos) and step(actions) ->
    (observations, rewards, terminations, truncations, infos), each a dict by agent. Values are
    copies."""

    metadata = {"name": "fleetsim", "render_modes": [], "is_parallelizable": True}
    render_mode = None

    def __init__(self, env, world=0):
        if env.autoreset:
            raise ValueError("a ParallelEnv view needs an Env made with autoreset=False "
                             "(PettingZoo environments end; reset() starts the next episode)")
        self.env, self.world = env, int(world)
        self.possible_agents = list(env.agents)
        self.agents = []
        self._index = {a: i for i, a in enumerate(self.possible_agents)}
        self._actions = np.zeros((env.num_worlds, env.num_agents, env.action_dim))

    @property
    def num_agents(self):
        return len(self.agents)

    @property
    def max_num_agents(self):
        return len(self.possible_agents)

    def observation_space(self, agent):
        return self.env.single_observation_space

    def action_space(self, agent):
        return self.env.single_action_space

    def _dict(self, array):
        return {a: array[self.world, i].copy() if array.ndim > 2 else array[self.world, i].item()
                for i, a in enumerate(self.possible_agents)}

    def reset(self, seed=None, options=None):
        obs, infos = self.env.reset(seed=seed, options=options)
        self.agents = list(self.possible_agents)
        return self._dict(obs), {a: {} for a in self.agents}

    def step(self, actions):
        if not self.agents:
            raise ValueError("the episode has ended: call reset()")
        missing = [a for a in self.agents if a not in actions]
        unknown = [a for a in actions if a not in self._index]
        if missing or unknown:
            why = f"no action for {missing[0]}" if missing else f"no agent {unknown[0]}"
            raise ValueError(f"actions: one per live agent ({why})")
        for a, act in actions.items():
            self._actions[self.world, self._index[a]] = act
        obs, rew, term, trunc, _ = self.env.step(self._actions)
        out = (self._dict(obs), self._dict(rew), self._dict(term), self._dict(trunc),
               {a: {} for a in self.possible_agents})
        if bool(term[self.world].any() or trunc[self.world].any()):
            self.agents = []
        return out

    def close(self):
        self.env.close()
