"""Exercise trajectory_return (Milestone 2): the return of a trajectory, and
the return-to-go.

Check your work with:  course check trajectory_return
"""


def trajectory_return(rewards: list[float], gamma: float = 1.0) -> float:
    """The (discounted) return of one trajectory: G = Σ_t γ^t · r_t.

    Input: `rewards`, the rewards r_0, r_1, ..., r_{T-1} received at each
    step, in order (possibly empty: then G = 0.0); `gamma`, the discount γ
    in [0, 1] (1.0 means no discount; with γ = 0 only the first reward
    counts).

    Output: G as a float.
    """
    # --- YOUR CODE (Milestone 2) ---
    raise NotImplementedError(
        "trajectory_return: write your code between the YOUR CODE lines")
    # --- END OF YOUR CODE ---


def returns_to_go(rewards: list[float], gamma: float = 1.0) -> list[float]:
    """The return from each step onward: G_t = Σ_{k >= t} γ^(k-t) · r_k, for
    every t.

    Input: the same `rewards` and `gamma` as `trajectory_return`.

    Output: a list of floats, the same length as `rewards`; its first entry
    equals `trajectory_return(rewards, gamma)`. Hint: walk backwards,
    G_t = r_t + γ · G_{t+1}.
    """
    # --- YOUR CODE (Milestone 2) ---
    raise NotImplementedError(
        "returns_to_go: write your code between the YOUR CODE lines")
    # --- END OF YOUR CODE ---
