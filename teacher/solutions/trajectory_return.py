"""Reference solution: trajectory_return (Milestone 2). Teacher only."""


def trajectory_return(rewards: list[float], gamma: float = 1.0) -> float:
    """G = Σ_t γ^t · r_t (0.0 for an empty trajectory)."""
    # --- YOUR CODE (Milestone 2) ---
    return float(sum(gamma**t * r for t, r in enumerate(rewards)))
    # --- END OF YOUR CODE ---


def returns_to_go(rewards: list[float], gamma: float = 1.0) -> list[float]:
    """G_t = r_t + γ · G_{t+1} for every t, computed backwards from the end."""
    # --- YOUR CODE (Milestone 2) ---
    returns, g = [], 0.0
    for r in reversed(rewards):
        g = r + gamma * g
        returns.append(g)
    return returns[::-1]
    # --- END OF YOUR CODE ---
