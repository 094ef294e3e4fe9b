"""RL Foundations for LLMs: the course harness.

One strict verifier (`course.scorer.score`) used by three loops that must never be confused:
Loop A evaluates (`course.eval`), Loop B selects (`course.selection`), Loop C learns
(`course.bandit`, `course.mdp`, `course.kl`). Runs are saved by `course.runs`.
"""

__version__ = "0.1.0"
