"""Driving the `course` command from a test: its exit status and what it printed."""

from __future__ import annotations

from course.cli import main


def run(capsys, *argv) -> tuple[int, str, str]:
    """`course ARGV...` in this process: (exit status, stdout, stderr)."""
    code = main([str(arg) for arg in argv])
    out, err = capsys.readouterr()
    return code, out, err


def one_error_line(err: str, command: str) -> bool:
    """Whether stderr holds exactly one line, `course COMMAND: error: ...`, besides warnings."""
    lines = [line for line in err.splitlines() if not line.startswith(f"course {command}: warn")]
    return len(lines) == 1 and lines[0].startswith(f"course {command}: error: ")
