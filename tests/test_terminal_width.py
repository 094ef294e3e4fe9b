"""Nothing a student needs hides at the right edge: every story, log and table a command prints
fits 80 columns, and a table's short headings are explained once, by a legend printed once.

Each command runs in an empty folder, as a student runs it: the default story modes the
lessons name (`course bandit`, `course mdp`, `course learn --slow-motion`, ...), and the
options that make lines longer (a batch of samples, a long completion, a saved run)."""

from __future__ import annotations

import unicodedata

import pytest

from course import mdp
from course.bandit import ADVANTAGE_SIGN_NOTE, fast_log_legend
from course.cli import main
from course.commands import goodhart, selection
from course.explain import SPEC_LEGEND
from course.formatting import COLUMNS, fill, literal_within, numbered_legend, paragraph, wrap
from course.kl import POLICY_LEGEND, SWEEP_LEGEND
from course.learn import LOG_HEADER, LOG_LEGEND, SLOW_MOTION_LEGEND
from course.paths import RUNS_DIR
from course.peers import ComparisonConfig, usable_rules
from course.reports.peers import DISAGREEMENT_NOTE
from course.reports.rubrics import MATRIX_NOTE
from course.rubrics import MatrixConfig

LONG = "The answer is 17*19, which is " + "3" * 150 + ".\nFinal: 323 (I think)"
"""A completion longer than any line, with spaces and without, a line break, an answer."""


def columns(line: str) -> int:
    """How many terminal columns `line` takes: a wide (East Asian) character two, a combining
    mark none (the bar of `r̄`), any other character one."""
    return sum(0 if unicodedata.combining(ch) else
               2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in line)


def rubric_legend() -> list[str]:
    return [*numbered_legend(MatrixConfig().rubrics, prefix="R")[1], MATRIX_NOTE]


def peer_legend() -> list[str]:
    return [*numbered_legend(usable_rules(ComparisonConfig().rules)[0])[1], DISAGREEMENT_NOTE]


CASES = [
    (["bandit"], [ADVANTAGE_SIGN_NOTE, fast_log_legend(30)]),
    (["bandit", "--slow-motion"], [ADVANTAGE_SIGN_NOTE]),
    (["bandit", "--slow-motion", "--steps", "2", "--batch-size", "3", "--baseline", "batch"],
     [ADVANTAGE_SIGN_NOTE]),
    (["bandit", "--steps", "20", "--batch-size", "12", "--baseline", "batch",
      "--log-every-step"], [ADVANTAGE_SIGN_NOTE, fast_log_legend(1)]),
    (["mdp"], [mdp.CREDIT_RULE, mdp.EPISODE_LEGEND, mdp.EPISODE_HEADER]),
    (["mdp", "--episodes", "60", "--log-every-episode", "--baseline", "none"],
     [mdp.CREDIT_RULE, mdp.EPISODE_LEGEND, mdp.EPISODE_HEADER]),
    (["kl"], [SWEEP_LEGEND]),
    (["kl", "--beta", "0.5"], [POLICY_LEGEND]),
    (["learn"], [LOG_LEGEND, LOG_HEADER]),
    (["learn", "--steps", "3", "--batch-size", "2", "--out", "run", "--note", "n"],
     [LOG_LEGEND, LOG_HEADER]),
    (["learn", "--slow-motion"], [SLOW_MOTION_LEGEND]),
    (["learn", "--slow-motion", "--reward", "answer_anywhere"], [SLOW_MOTION_LEGEND]),
    (["goodhart"], [goodhart.legend("answer_anywhere")]),
    (["goodhart", "--steps", "40", "--out", "run", "--note", "n"],
     [goodhart.legend("answer_anywhere")]),
    (["select", "--out", "run", "--note", "n"], [selection.LEGEND]),
    (["score", "Final: 323", "--expected", "323"], []),
    (["score", LONG, "--expected", "9" * 600], []),
    (["score", "--spec"], [SPEC_LEGEND]),
    (["rubrics"], rubric_legend()),
    (["rubrics", "--try", LONG, "--expected", "9" * 600], []),
    (["peers"], peer_legend()),
    (["peers", "--try", LONG], []),
]


@pytest.mark.parametrize(("argv", "legends"), CASES, ids=[
    " ".join(arg if len(arg) < 20 else "LONG" for arg in argv) for argv, _ in CASES])
def test_every_line_fits_80_columns_and_each_legend_is_printed_once(
        argv, legends, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)                          # a saved run lands in this folder
    assert main(argv) == 0
    out = capsys.readouterr().out
    wide = [f"{columns(line)} columns: {line}" for line in out.splitlines()
            if max(len(line), columns(line)) > COLUMNS]
    assert not wide, "\n".join(wide)
    for legend in legends:
        assert out.count(legend) == 1, legend


def test_the_grids_name_every_column_heading_in_their_legend(capsys):
    assert main(["rubrics"]) == 0
    out = capsys.readouterr().out.splitlines()
    keys, legend = numbered_legend(MatrixConfig().rubrics, prefix="R")
    heading = next(line for line in out if line.startswith("id "))
    assert heading.split()[-len(keys):] == keys and out[:len(legend)] == legend
    assert main(["peers"]) == 0
    out = capsys.readouterr().out.splitlines()
    keys, legend = numbered_legend(usable_rules(ComparisonConfig().rules)[0])
    heading = next(line for line in out if line.startswith("id "))
    assert heading.split()[-len(keys):] == keys and out[:len(legend)] == legend


def test_the_learn_story_keeps_its_sentences_whole(capsys):
    """`course.learn.slow_motion` is also printed by Milestone 2: its sentences wrap between
    words as whole paragraphs, never one sentence cut in two by a hard line break."""
    assert main(["learn", "--slow-motion"]) == 0
    story = capsys.readouterr().out
    assert paragraph("This one number multiplies the log-prob gradient of every piece below: "
                     "this completion's own term moves every piece down; the whole batch (its "
                     "other samples, and other prompts sharing table rows) moves them too.") \
        in story


@pytest.mark.parametrize("log", ["run_003/bandit_train_log.txt", "run_004/toy_mdp_log.txt",
                                 "run_009/train_log.txt", "run_011/train_log.txt"])
def test_the_committed_logs_fit_80_columns(log):
    """The canonical logs are the same lines the commands print (a lesson includes them)."""
    lines = (RUNS_DIR / log).read_text(encoding="utf-8").splitlines()
    assert max(max(len(line), columns(line)) for line in lines) <= COLUMNS


def test_wrap_breaks_between_words_keeps_vectors_whole_and_never_drops_a_character():
    text = "update     θ += lr × A × ∇log π(a) = [+0.543 -0.132 -0.279 -0.132]  " + "9" * 90
    lines = wrap(text, 40, indent="> ", hanging="  ")
    assert all(len(line) <= 40 for line in lines)
    assert lines[1] == "  [+0.543 -0.132 -0.279 -0.132]"           # a vector is one word
    assert "".join(line[2:] for line in lines).replace(" ", "") == text.replace(" ", "")
    assert wrap("short  enough   as it is", indent="- ") == ["- short  enough   as it is"]
    assert fill("x: ", ["a b", "c d"], 6, gap=" ") == ["x: a b", "   c d"]


def test_literal_within_cuts_visibly_and_says_how_long():
    assert literal_within("Final: 323", 20) == "'Final: 323'"
    assert literal_within("\uff26inal: 323", 40) == "'\\uff26inal: 323'"   # ASCII: one column each
    cut = literal_within("Final: " + "9" * 300, 30)
    assert cut == "'Final: 999999'... (307 chars)" and len(cut) == 30
    assert literal_within(None, 10) == "None"
