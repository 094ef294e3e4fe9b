"""Reference solution: pick_best (Milestone 0.5). Teacher only."""


def pick_best(samples: list[dict]) -> dict:
    """Return the sample with the highest reward; on a tie, the first one in the list."""
    # --- YOUR CODE (Milestone 0.5) ---
    best = samples[0]
    for sample in samples[1:]:
        if sample["reward"] > best["reward"]:  # strictly greater, so earlier samples keep ties
            best = sample
    return best
    # --- END OF YOUR CODE ---
