"""Exercise pick_best (Milestone 0.5): Best-of-N selection, the whole of
Loop B in one function.

Check your work with:  course check pick_best
"""


def pick_best(samples: list[dict]) -> dict:
    """Return the sample with the highest reward.

    Input: `samples`, a list of at least one dict. Each dict has a numeric
    `"reward"` (any float: 0.0 or 1.0 from the scorer, but the check also
    uses fractions and negative numbers) and other keys such as
    `"sample_id"` and `"completion"` that you should not need.

    Output: one of the dicts from `samples` itself (not a copy, not its id).

    The rule: the highest reward wins. On a tie, the sample that comes FIRST
    in the list wins, so the choice never depends on the text of a
    completion and the same pack always gives the same pick. Do not change
    the list.
    """
    # --- YOUR CODE (Milestone 0.5) ---
    raise NotImplementedError(
        "pick_best: write your code between the YOUR CODE lines")
    # --- END OF YOUR CODE ---
