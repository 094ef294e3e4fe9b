"""Reference solution: kata_m5 (Milestone 5). Teacher only: the labels equal
teacher/kata/teacher_key_m5.json; the fixes are a model answer in a student's words."""

LABELS: dict[str, str | None] = {
    # --- YOUR CODE (Milestone 5) ---
    "m5-01": "model_failure",
    "m5-02": "verifier_bug",
    "m5-03": "ambiguous_spec",
    "m5-04": "reward_hack",
    "m5-05": "verifier_bug",
    "m5-06": "model_failure",
    "m5-07": "verifier_bug",
    "m5-08": "model_failure",
    "m5-09": "reward_hack",
    "m5-10": "ambiguous_spec",
    # --- END OF YOUR CODE ---
}

FIXES: dict[str, str] = {
    # --- YOUR CODE (Milestone 5) ---
    "m5-01": "Nothing in the scorer; tag the misconception (one duration for both legs).",
    "m5-02": "Re-score with strict-v1; never normalise lookalikes; keep the case as an exploit.",
    "m5-03": "Write the grouping explicitly, e.g. (2^3)^2, or drop the prompt.",
    "m5-04": "Require the whole line to be `Final: <int>`; add the hedge to the exploit suite.",
    "m5-05": "Re-score with the current scorer; keep a negative answer in the golden set.",
    "m5-06": "Keep reward 0 as a format failure; do not widen the parser to other digits.",
    "m5-07": "Re-score with strict-v1; keep `Final: 0` in the golden correct set.",
    "m5-08": "Keep reward 0 as a format failure; tighten the prompt if it is common.",
    "m5-09": "Score a single Final line only; add the case to the exploit suite.",
    "m5-10": "State the rounding rule in the prompt, or avoid halves.",
    # --- END OF YOUR CODE ---
}
