"""A linear policy for aggregation, trained by a simple evolution strategy, with numpy only.

Each generation evaluates the policy and 2 * half (16) perturbations of it at once, one per
world of a fleetsim.Env. The perturbations start from the same placement (one seed per
generation); world 0 runs the policy itself on a placement that never changes, so its score,
printed, shows the progress. A robot sees the centroid of its world's robots in its own frame
and its 8 proximity rays; its wheel speeds are a linear function of those. The score is the mean
over the episode of minus the distance to the centroid (the built-in `centroid` reward), so it
rises as the robots gather.

    PYTHONPATH=build/python python3 examples/python/learn_aggregation.py [--generations N]
"""
import argparse
import os

import numpy as np

import fleetsim

HERE = os.path.dirname(os.path.abspath(__file__))


def features(obs):
    """obs [W, robots, proximity(8) + x, y, theta] -> [W, robots, 11]: the centroid in the
    robot's frame (forward, left), the proximity rays, and 1."""
    prox, x, y, theta = obs[..., :8], obs[..., 8], obs[..., 9], obs[..., 10]
    dx = x.mean(axis=1, keepdims=True) - x
    dy = y.mean(axis=1, keepdims=True) - y
    c, s = np.cos(theta), np.sin(theta)
    ahead, left = c * dx + s * dy, -s * dx + c * dy
    return np.concatenate([ahead[..., None], left[..., None], prox, np.ones_like(x)[..., None]],
                          axis=-1)


def evaluate(env, policies, seeds):
    """Runs one episode of every world, world w from seed seeds[w] and driven by policies[w]
    ([2, 11]); returns each world's score: the mean reward of its robots over the episode."""
    obs, _ = env.reset(seed=seeds)
    high = env.single_action_space.high
    total = np.zeros(env.num_worlds)
    steps = 0
    while True:
        actions = np.clip(np.einsum("wrf,waf->wra", features(obs), policies), -high, high)
        obs, rewards, term, trunc, _ = env.step(actions)
        total += rewards.mean(axis=1)
        steps += 1
        if term.any() or trunc.any():
            return total / steps


def train(generations=30, half=8, sigma=0.5, rate=0.3, length=None, seed=1, threads=None,
          path=os.path.join(HERE, "aggregation.xml"), report=print):
    """Returns (the score of the first policy, of the last, both on the held-out episode, and
    the policy's score at each generation on it)."""
    worlds = 1 + 2 * half
    # Observations (proximity, x, y, theta), the wheels and the reward (centroid) are those
    # the experiment's <learning> declares.
    env = fleetsim.Env(path, worlds, length=length, threads=threads, autoreset=False)
    rng = np.random.default_rng(seed)
    theta = np.zeros((2, 11))
    held_out = 10_000  # world 0's seed: the same episode every generation
    first = evaluate(env, np.broadcast_to(theta, (worlds, 2, 11)), [held_out] * worlds)[0]
    history = []
    for g in range(generations):
        eps = rng.standard_normal((half, 2, 11))
        policies = np.concatenate([theta[None], theta + sigma * eps, theta - sigma * eps])
        scores = evaluate(env, policies, [held_out] + [seed + g] * (2 * half))
        history.append(scores[0])
        report(f"generation {g:3d}  score {scores[0]:+.4f}  best perturbation "
               f"{scores[1:].max():+.4f}")
        # Antithetic pairs, ranks instead of raw scores (robust to their scale).
        ranks = np.argsort(np.argsort(scores[1:])) / (2 * half - 1) - 0.5
        grad = np.einsum("k,kij->ij", ranks[:half] - ranks[half:], eps) / (half * sigma)
        theta = theta + rate * grad
    last = evaluate(env, np.broadcast_to(theta, (worlds, 2, 11)), [held_out] * worlds)[0]
    env.close()
    report(f"first policy {first:+.4f}  last policy {last:+.4f} (the held-out episode)")
    return first, last, history


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--generations", type=int, default=30)
    ap.add_argument("--length", type=float, default=None, help="seconds per episode")
    args = ap.parse_args()
    train(args.generations, length=args.length)
