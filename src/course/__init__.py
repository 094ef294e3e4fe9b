"""RL Foundations for LLMs: the course harness.

One strict verifier (`course.scorer.score`) used by three loops that must never be confused:
Loop A evaluates (`course.evaluation`), Loop B selects (`course.selection`), Loop C learns
(`course.bandit`, `course.mdp`, `course.kl`, on the categorical policy of `course.policy`).
Runs are saved by `course.runs`; each kind of run is written by its report in
`course.reports`, and the `course` command lives in `course.cli` and `course.commands`.
"""

__version__ = "0.1.0"
