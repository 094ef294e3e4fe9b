"""A categorical policy over K choices: the math every learning loop of the course shares.

A softmax policy with logits θ (one real number per action) is

    π_θ(a) = exp(θ_a) / Σ_b exp(θ_b)

and REINFORCE only ever needs three things from it: the probabilities (`softmax`), the
gradient of the log-probability of the action that was sampled (`grad_log_prob`), and a way to
sample (`sample_actions`). The bandit (`course.bandit`), the two-step MDP (`course.mdp`), the
KL tradeoff (`course.kl`) and the Goodhart toy (`course.goodhart`) all use these three.

Every function broadcasts over leading axes: θ may be (K,) for one learner or (L, K) for L
independent learners updated side by side.
"""

from __future__ import annotations

import numpy as np


def softmax(theta: np.ndarray) -> np.ndarray:
    """π(a) = exp(θ_a) / Σ_b exp(θ_b) over the last axis; (..., K) -> (..., K).

    The max is subtracted first (the result is unchanged, the exponentials cannot overflow);
    a logit of -inf gives probability exactly 0.
    """
    z = theta - np.max(theta, axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def grad_log_prob(actions: np.ndarray | int, probs: np.ndarray) -> np.ndarray:
    """∇θ log π(a) = onehot(a) - π, the score function of a softmax policy.

    `actions` has shape (...) of ints in [0, K); `probs` broadcasts against (..., K). The
    entry for the sampled action is 1 - π(a) > 0; every other entry is -π(b) < 0. So a step
    along it raises the sampled action's logit and lowers all others.
    """
    k = probs.shape[-1]
    return np.eye(k)[actions] - probs


def sample_actions(probs: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """n actions per learner by inverse CDF; probs (..., K) -> actions (..., n).

    One uniform u per sample; the action is the number of cumulative probabilities <= u
    (capped at K - 1 in case rounding leaves the last cumulative sum a hair below 1).
    """
    u = rng.random((*probs.shape[:-1], n))
    cdf = np.cumsum(probs, axis=-1)
    return np.minimum((u[..., None] >= cdf[..., None, :]).sum(axis=-1), probs.shape[-1] - 1)
