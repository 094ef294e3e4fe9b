"""Exercise spec_tests (Milestone 4): extend the scorer's spec with cases of
your own.

The strict scorer's spec is a table of decisions
(`course.scorer.SPEC_DECISIONS`, or run `course score --spec`). Add AT LEAST
5 new cases to `SPEC_CASES` below. Each case is a dict:

    {"completion": <the text a policy wrote>,
     "expected_answer": <the problem's int answer>,
     "reward": <the reward you expect: 1.0 or 0.0>,
     "code": <the details["code"] you expect: one of course.scorer.CODES>}

`course check spec_tests` scores every case with the strict scorer and
asserts BOTH the reward and the code. Done means:
    - at least 5 cases, every one of them agreeing with the scorer;
    - at least 3 different codes among them;
    - no completion already in SPEC_DECISIONS, and no completion twice.

A case the scorer disagrees with is either a misunderstanding of the spec
(read the message the check prints) or a scorer bug: if you are sure it is
a bug, show your teacher.

Check your work with:  course check spec_tests
"""

# An example of the shape (not counted: it is a comment):
#     {"completion": "Final: 7", "expected_answer": 7, "reward": 1.0,
#      "code": "correct"},

SPEC_CASES: list[dict] = [
    # --- YOUR CODE (Milestone 4) ---
    # --- END OF YOUR CODE ---
]
