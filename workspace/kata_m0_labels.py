"""Exercise kata (Milestone 0): label the debugging kata.

The examples are in data/kata/kata_m0.jsonl: a prompt, its expected answer, the
completion, and the reward and code recorded when it was scored. Something is
wrong with each of them, and the reason differs. `course check kata` also
prints them until you start.

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

Check your work with:  course check kata
"""

LABELS: dict[str, str | None] = {
    # --- YOUR CODE (Milestone 0) ---
    "kata-01": None,
    "kata-02": None,
    "kata-03": None,
    "kata-04": None,
    "kata-05": None,
    "kata-06": None,
    "kata-07": None,
    "kata-08": None,
    "kata-09": None,
    "kata-10": None,
    # --- END OF YOUR CODE ---
}

FIXES: dict[str, str] = {
    # --- YOUR CODE (Milestone 0) ---
    "kata-01": "",
    "kata-02": "",
    "kata-03": "",
    "kata-04": "",
    "kata-05": "",
    "kata-06": "",
    "kata-07": "",
    "kata-08": "",
    "kata-09": "",
    "kata-10": "",
    # --- END OF YOUR CODE ---
}
