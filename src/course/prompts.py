"""The prompt the course asks: every problem's text, then one sentence that asks for the format.

The scorer judges `Final: <int>`; this sentence is how a prompt asks for it, and its version
is recorded with every set of completions (a changed sentence is a new environment: the
Locked Room refuses to compare across it). `course.datagen` writes it into every problem;
`course.check` and `course.smollm_data` take it off again where they need the question alone.
"""

from __future__ import annotations

INSTRUCTION = "Output exactly one line: Final: <int>"
"""The last sentence of every problem's prompt."""

PROMPT_VERSION = "final-int-v1"
"""The prompt template: the problem text, then `INSTRUCTION`."""
