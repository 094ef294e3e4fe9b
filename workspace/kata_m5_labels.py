"""Exercise kata_m5 (Milestone 5): label the harder debugging kata.

The examples are in data/kata/kata_m5.jsonl: a prompt, its expected answer, the
completion, and the reward and code recorded when it was scored. Something is
wrong with each of them, and the reason differs. `course check kata_m5` also
prints them until you start.

Each example also names the scorer that recorded it (`scorer_version`); the
current scorer is strict-v1. Check that field before you trust a recorded
reward.

For each example id, set LABELS[id] to one of the four causes
(course.data.KATA_CAUSES):

    "model_failure"   the policy got it wrong; the scorer judged it correctly
    "verifier_bug"    the recorded reward is wrong: the scorer used at the time
                      misjudged it
    "ambiguous_spec"  the prompt or spec admits more than one reading (or no
                      integer answer)
    "reward_hack"     the completion games a weak rubric and was
                      rewarded for it

and write in FIXES[id] one concrete fix (a spec change, a new test, a prompt
rewrite, or "drop this example"), in a sentence or two. Justify each label in
your notes.

The check compares your labels with the teacher's key and, for every label that
disagrees, shows the key's reasoning and suggested fix. It reveals nothing for
an example you have not labelled yet, so commit to a label first.

Check your work with:  course check kata_m5
"""

LABELS: dict[str, str | None] = {
    # --- YOUR CODE (Milestone 5) ---
    "m5-01": None,
    "m5-02": None,
    "m5-03": None,
    "m5-04": None,
    "m5-05": None,
    "m5-06": None,
    "m5-07": None,
    "m5-08": None,
    "m5-09": None,
    "m5-10": None,
    # --- END OF YOUR CODE ---
}

FIXES: dict[str, str] = {
    # --- YOUR CODE (Milestone 5) ---
    "m5-01": "",
    "m5-02": "",
    "m5-03": "",
    "m5-04": "",
    "m5-05": "",
    "m5-06": "",
    "m5-07": "",
    "m5-08": "",
    "m5-09": "",
    "m5-10": "",
    # --- END OF YOUR CODE ---
}
