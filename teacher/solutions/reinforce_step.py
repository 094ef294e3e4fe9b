"""Reference solution: reinforce_step (Milestone 1). Teacher only."""

import numpy as np


def reinforce_step(theta: np.ndarray, action: int, reward: float,
                   baseline: float, lr: float) -> tuple[float, np.ndarray]:
    """One REINFORCE step: A = r - b, θ' = θ + lr · A · (onehot(a) - softmax(θ))."""
    # --- YOUR CODE (Milestone 1) ---
    z = np.exp(theta - np.max(theta))      # stable softmax: shifting θ leaves π unchanged
    probs = z / z.sum()
    grad_log_prob = -probs                 # ∇θ log π(a) = onehot(a) - π
    grad_log_prob[action] += 1.0
    advantage = reward - baseline          # A = r - b
    return advantage, theta + lr * advantage * grad_log_prob   # a new array, θ is untouched
    # --- END OF YOUR CODE ---
