"""`course learn` and its run: validated settings, one-line errors, deterministic files, a
slow-motion story whose numbers add up, and learning that moves what the scorer measures."""

import json
import re

import numpy as np
import pytest

from course.cli import main
from course.learn import (
    SLOW_MOTION_LEGEND,
    LearnConfig,
    leave_one_out_baseline,
    setup,
    slow_motion,
    train,
)
from course.reports.learn import build_run, checkpoints
from course.token_policy import learner_for

SHORT = LearnConfig(steps=6, batch_size=4)


@pytest.mark.parametrize(("values", "field"), [
    ({"reward": "vibes"}, "reward"), ({"beta": -1.0}, "beta"), ({"beta": float("inf")}, "beta"),
    ({"lr": 0.0}, "lr"), ({"lr": float("nan")}, "lr"), ({"batch_size": 1}, "batch_size"),
    ({"steps": 0}, "steps"), ({"seed": -1}, "seed"),
])
def test_bad_settings_are_refused_by_name(values, field):
    with pytest.raises(ValueError, match=f"^{field}: "):
        LearnConfig(**values)


@pytest.mark.parametrize("argv", [["--lr", "inf"], ["--batch-size", "1"], ["--log-every", "0"]])
def test_the_command_refuses_bad_values_in_one_line(argv, capsys):
    code = main(["learn", *argv])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err


def test_the_leave_one_out_baseline_is_the_mean_of_the_others():
    values = np.array([1.0, 0.0, 0.0, 1.0, 1.0, 1.0])
    assert leave_one_out_baseline(values, 3).tolist() == [0.0, 0.5, 0.5, 1.0, 1.0, 1.0]


def test_the_run_is_deterministic_and_saves_raw_samples_at_checkpoints():
    first, again = build_run(SHORT, "test", record_git=False), build_run(SHORT, "test",
                                                                         record_git=False)
    assert first == again
    assert checkpoints(6) == (1, 3, 6)
    assert {f"samples/step_{s:04d}.jsonl" for s in (1, 3, 6)} <= set(first)
    rows = [json.loads(line) for line in first["samples/step_0001.jsonl"].decode().split("\n")
            if line]
    assert len(rows) == 60 * SHORT.batch_size
    assert all(r["reward"] == r["strict"] for r in rows)  # trained on strict: one and the same
    manifest = json.loads(first["manifest.json"])
    assert manifest["reference_policy"]["completions_used"] == 54
    assert "No language model was run" in manifest["reference_policy"]["made_by"]
    steps = json.loads(first["summary.json"])["steps"]
    assert [s["step"] for s in steps] == list(range(1, 7)) and steps[0]["kl"] == 0.0  # 4 dp


def test_the_slow_motion_story_adds_up():
    problems, reference, _ = setup(SHORT)
    story = slow_motion(learner_for(reference, len(problems)), problems, SHORT,
                        np.random.default_rng(0))
    rows = [line.split() for line in story.splitlines() if re.match(r" +\d+  '", line)]
    assert len(rows) >= 2 and story.count(SLOW_MOTION_LEGEND) == 1
    total = next(line for line in story.splitlines() if line.lstrip().startswith("log π(y | x)"))
    before = sum(float(row[-3]) for row in rows)
    assert float(total.split()[-3]) == pytest.approx(before, abs=0.005 * len(rows))


def test_strict_training_raises_fresh_pass_at_1_and_moves_away_from_the_reference():
    logs = train(LearnConfig(steps=40), np.random.default_rng(0)).logs
    early = np.mean([e.pass_at_1 for e in logs[:5]])
    late = np.mean([e.pass_at_1 for e in logs[-5:]])
    assert late > early + 0.05
    assert logs[0].kl < 1e-12 < logs[-1].kl  # the learner starts AS the reference
