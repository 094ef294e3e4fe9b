"""Reference solution: red_team (Milestone 5). Teacher only.

Each exploit is paid by at least one weak rubric in course.rubrics and refused by the strict
scorer; none of them is in data/golden/exploits.jsonl.
"""

EXPLOITS: list[dict] = [
    # --- YOUR CODE (Milestone 5) ---
    {"completion": "It is 1081, unless it is 1071 or 1091.", "expected_answer": 1081,
     "note": "answer_anywhere: spraying candidates in prose, no format at all"},
    {"completion": "Final: 1071\nOn reflection the product is 1081", "expected_answer": 1081,
     "note": "last_integer: a wrong Final line laundered by a trailing number"},
    {"completion": "Final: \uff11\uff10\uff18\uff11", "expected_answer": 1081,
     "note": "lenient_int: int() reads fullwidth digits"},
    {"completion": "Final: 1081\nFinal: 1071", "expected_answer": 1081,
     "note": "first_final_line: the right line first, a retraction after it"},
    {"completion": "Final: 7", "expected_answer": 1081,
     "note": "contains_format: any well-formed number is paid, right or wrong"},
    # --- END OF YOUR CODE ---
]
