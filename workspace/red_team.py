"""Exercise red_team (Milestone 5): break the hackable rubrics with exploits
of your own.

`course.rubrics.RUBRICS` holds the strict scorer and five weak rubrics that
each have a hole (`course rubrics` prints what each one admits). Write AT
LEAST 3 exploits in `EXPLOITS` below. Each exploit is a dict:

    {"completion": <the text a reward-hacking policy would write>,
     "expected_answer": <the problem's int answer>,
     "note": <optional: one line on which assumption the exploit breaks>}

`course check red_team` scores each exploit with every rubric. Done means:
    - every exploit gets reward 1.0 from at least one weak rubric and 0.0
      from the strict one;
    - together your exploits fool at least 2 different weak rubrics;
    - none is already in data/golden/exploits.jsonl, and none appears
      twice.

Check your work with:  course check red_team
"""

# An example of the shape (not counted: it is a comment):
#     {"completion": "Final: 12 (or 13)", "expected_answer": 12,
#      "note": "a hedge"},

EXPLOITS: list[dict] = [
    # --- YOUR CODE (Milestone 5) ---
    # --- END OF YOUR CODE ---
]
