"""Reference solution: kata (Milestone 0). Teacher only: the labels equal
teacher/kata/teacher_key_m0.json; the fixes are a model answer in a student's words."""

LABELS: dict[str, str | None] = {
    # --- YOUR CODE (Milestone 0) ---
    "kata-01": "model_failure",
    "kata-02": "verifier_bug",
    "kata-03": "reward_hack",
    "kata-04": "ambiguous_spec",
    "kata-05": "model_failure",
    "kata-06": "model_failure",
    "kata-07": "verifier_bug",
    "kata-08": "ambiguous_spec",
    "kata-09": "reward_hack",
    "kata-10": "model_failure",
    # --- END OF YOUR CODE ---
}

FIXES: dict[str, str] = {
    # --- YOUR CODE (Milestone 0) ---
    "kata-01": "Nothing in the scorer: a real arithmetic slip, keep it in the eval set.",
    "kata-02": "Trim surrounding whitespace before parsing; add `Final: 323\\n` to the golden set.",
    "kata-03": "Parse the whole line strictly; add this hedge to the exploit suite.",
    "kata-04": "Say whether both ends count, or drop the prompt.",
    "kata-05": "Keep reward 0 and count it as a format failure; do not parse sentences.",
    "kata-06": "Nothing in the scorer; keep negative answers in the eval set.",
    "kata-07": "Parse with the spec's grammar, not int(); add `Final: 3_99` to the exploits.",
    "kata-08": "Drop it or change the numbers so the answer is an integer.",
    "kata-09": "Enforce exactly one line; add this laundering case to the exploit suite.",
    "kata-10": "Nothing in the scorer; tag it as the precedence misconception.",
    # --- END OF YOUR CODE ---
}
