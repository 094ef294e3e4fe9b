"""Exercise reinforce_step (Milestone 1): one REINFORCE update of a softmax
bandit policy.

Check your work with:  course check reinforce_step
"""

import numpy as np


def reinforce_step(theta: np.ndarray, action: int, reward: float,
                   baseline: float, lr: float) -> tuple[float, np.ndarray]:
    """Take one policy-gradient step after sampling `action` and seeing
    `reward`.

    Inputs:
        theta: the policy's logits, a float array of shape (K,), K >= 2.
            The policy is π = softmax(θ), π(a) = exp(θ_a) / Σ_b exp(θ_b).
            Logits can be large (1000): subtract max(θ) before exp so
            nothing overflows (the probabilities are the same).
        action: the sampled action, an int in [0, K).
        reward: the reward that action received (a float).
        baseline: b, what reward we expected (a float).
        lr: the learning rate, a float > 0.

    Output: the pair `(advantage, new_theta)`:
        advantage: A = reward - baseline, a float;
        new_theta: θ + lr · A · ∇θ log π(action), a NEW array of shape
            (K,), where ∇θ log π(a) = onehot(a) - π (1 at position a,
            0 elsewhere, minus the probabilities).

    Do not modify `theta` in place: the caller still needs the old logits.
    """
    # --- YOUR CODE (Milestone 1) ---
    raise NotImplementedError(
        "reinforce_step: write your code between the YOUR CODE lines")
    # --- END OF YOUR CODE ---
