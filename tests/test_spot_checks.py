"""The spot checks of the runs whose rebuild trains a model many times (run_009 to run_013 and
run_020; run_021's is tests/test_learn_tiny_run.py's): `course runs verify` passes an intact run
in seconds, and finds a number edited in the saved trainings or seeds, in a file made from
them, or a training that no longer gives its saved rows."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace

import pytest

from course import runs
from course.paths import RUNS_DIR
from course.reports import canonical, learn, learn_family, learn_kl

TINY_KL = replace(learn_kl.CONFIG, steps=12)
"""run_012's sweep, 12 steps a training (the finals are means of the last 10)."""


def edit_raw(folder, raw: str, edit) -> None:
    """Rewrite one line of the run's raw file with `edit(record)`."""
    path = folder / raw
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    edit(lines)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


def test_the_kl_sweeps_check_passes_it_whole_and_finds_an_edit_and_a_training(tmp_path):
    folder = runs.write_run(tmp_path / "sweep", learn_kl.build_run(TINY_KL, "note",
                                                                   record_git=False))
    assert learn_kl.spot_check(TINY_KL, "note", folder) == []

    def nudge(lines):       # β 0.1, seed 0 (a trained-again one), step 4's KL
        line = next(x for x in lines if (x["beta"], x["seed"]) == (0.1, learn_kl.SPOT_SEED))
        line["rows"][3][2] += 0.001

    edit_raw(folder, learn_kl.RAW, nudge)
    found = learn_kl.spot_check(TINY_KL, "note", folder)
    assert any(line.startswith("summary.json") for line in found), found
    assert any(line.startswith("manifest.json") or "seal" in line for line in found), found
    assert f"{learn_kl.RAW}: β 0.1, seed 0 trained again differs from step 4" in found


def test_the_familys_check_finds_an_edit_and_a_training_that_differs(tmp_path, monkeypatch):
    """On a copy of the committed run_020; its trainings are stood in for by their saved
    checkpoints (the real ones are trained again by `course runs verify` in the test
    command), but for one arm, whose checkpoint is off by a little."""
    folder = tmp_path / "run_020"
    shutil.copytree(RUNS_DIR / "run_020", folder)
    saved = {(line["reward"], line["arm"], line["seed"]): line for line in map(
        json.loads, (folder / learn_family.RAW).read_text(encoding="utf-8").splitlines())}

    named = learn_family.arms(learn_family.CONFIG)

    def stand_in(config):
        arm = next(arm for arm, arm_config in named[config.reward].items()
                   if replace(arm_config, seed=config.seed) == config)
        line = saved[(config.reward, arm, config.seed)]
        points = [dict(point) for point in line["points"]]
        if (config.reward, config.advantage) == ("answer_anywhere", "grpo"):
            points[1]["entropy"] += 1e-9
        return points, line["drawn"]

    monkeypatch.setattr(learn_family, "trajectory", stand_in)
    found = learn_family.spot_check(learn_family.CONFIG, canonical.NOTES["run_020"], folder)
    assert found == [f"{learn_family.RAW}: answer_anywhere grpo, seed 0 trained again differs "
                     "from its saved checkpoints"]

    def nudge(lines):       # seed 3 of strict rloo, which no check trains again
        next(x for x in lines if (x["arm"], x["seed"]) == ("rloo", 3))["points"][2]["paid"] += 1

    edit_raw(folder, learn_family.RAW, nudge)
    found = learn_family.spot_check(learn_family.CONFIG, canonical.NOTES["run_020"], folder)
    assert any(line.startswith("summary.json") for line in found), found


def test_a_run_over_seeds_is_checked_from_seed_0_again_and_the_others_saved(tmp_path):
    """On a copy of the committed run_013 (the cheapest of run_009, run_010, run_011 and
    run_013, which share `learn.spot_check`; `course runs verify` checks the four whole in the
    test command): intact, it passes; a number of a seed no check measures again changes the
    table over seeds and breaks the seal; seed 0's line edited differs from seed 0 measured
    again; a log that is not one object per seed is named in one line."""
    folder = tmp_path / "run_013"
    shutil.copytree(RUNS_DIR / "run_013", folder)

    def check() -> list[str]:
        return canonical.SPOT_CHECKED["run_013"](folder)

    assert check() == []
    key = "tokens_gap_closed_at_end"

    def nudge_seed_3(lines):
        lines[3][key] += 0.01

    edit_raw(folder, learn.SEEDS_LOG, nudge_seed_3)
    found = check()
    assert any(line.startswith("summary.json: differs") for line in found), found
    assert any(line.startswith("README.md: differs") for line in found), found
    assert any(learn.SEEDS_LOG in line and "sha256" in line for line in found), found

    shutil.rmtree(folder)
    shutil.copytree(RUNS_DIR / "run_013", folder)

    def nudge_seed_0(lines):
        lines[0][key] += 0.01

    edit_raw(folder, learn.SEEDS_LOG, nudge_seed_0)
    assert any(line.startswith(f"{learn.SEEDS_LOG}: differs") for line in check()), check()

    (folder / learn.SEEDS_LOG).write_text('[1, 2]\n{"seed": 1}\n', encoding="utf-8")
    assert check() == [f"{learn.SEEDS_LOG} cannot be read back: {learn.SEEDS_LOG} must hold "
                       f"one object per seed of {list(learn.SEEDS)}, in order"]


@pytest.mark.parametrize("name", ["run_009", "run_010", "run_011", "run_012", "run_013",
                                  "run_020"])
def test_each_keeps_its_trainings_and_is_spot_checked(name):
    files = runs.read_files(RUNS_DIR / name)
    assert any(path.startswith("logs/") for path in files)
    assert name in canonical.SPOT_CHECKED and name in canonical.SPOT_CHECK_SAYS
    assert runs.unsealed(RUNS_DIR / name) == []
