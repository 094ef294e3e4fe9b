"""Reference solution: spec_tests (Milestone 4). Teacher only.

Each case is new (none of these completions is in course.scorer.SPEC_DECISIONS) and states
the reward and the code the strict scorer must give.
"""

SPEC_CASES: list[dict] = [
    # --- YOUR CODE (Milestone 4) ---
    # another answer than 323, and a big negative one: the rule is not about one number
    {"completion": "Final: 17", "expected_answer": 17, "reward": 1.0, "code": "correct"},
    {"completion": "Final: -1000", "expected_answer": -1000, "reward": 1.0, "code": "correct"},
    # a trailing tab is surrounding ASCII whitespace, trimmed like a newline
    {"completion": "Final: 17\t", "expected_answer": 17, "reward": 1.0, "code": "correct"},
    # zero written with two digits is not canonical
    {"completion": "Final: 00", "expected_answer": 0, "reward": 0.0,
     "code": "non_canonical_integer"},
    # the prefix is case-sensitive in every letter, not just the first
    {"completion": "FINAL: 17", "expected_answer": 17, "reward": 0.0, "code": "no_final_prefix"},
    # scientific notation and a double sign are not integers in the spec's grammar
    {"completion": "Final: 1e3", "expected_answer": 1000, "reward": 0.0,
     "code": "not_an_integer"},
    {"completion": "Final: --5", "expected_answer": -5, "reward": 0.0, "code": "not_an_integer"},
    # a no-break space BEFORE the line is not trimmed: only ASCII whitespace is
    {"completion": "\u00a0Final: 17", "expected_answer": 17, "reward": 0.0,
     "code": "non_ascii_character"},
    # the right answer twice is still two lines
    {"completion": "Final: 17\n\nFinal: 17", "expected_answer": 17, "reward": 0.0,
     "code": "multiple_lines"},
    # --- END OF YOUR CODE ---
]
