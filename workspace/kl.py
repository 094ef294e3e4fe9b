"""Exercise kl (Milestone 3): the KL divergence between two categorical
policies.

Check your work with:  course check kl
"""

import numpy as np


def kl_divergence(p: np.ndarray, q: np.ndarray) -> float:
    """KL(p ‖ q) = Σ_a p(a) · log(p(a) / q(a)), with the natural log (the
    unit is nats).

    Inputs: `p` and `q`, float arrays of the same shape (K,), each a
    probability vector (entries >= 0, summing to 1). Entries may be
    exactly 0.

    Output: a float >= 0 (0.0 exactly when p == q), or `float("inf")`.

    The two rules for zeros:
        - a term with p(a) = 0 counts 0 (0 · log 0 = 0), whatever q(a) is;
        - if p(a) > 0 where q(a) = 0, the divergence is infinite:
          return float("inf").

    Careful with the order: KL(p ‖ q) is not KL(q ‖ p).
    """
    # --- YOUR CODE (Milestone 3) ---
    raise NotImplementedError(
        "kl_divergence: write your code between the YOUR CODE lines")
    # --- END OF YOUR CODE ---
