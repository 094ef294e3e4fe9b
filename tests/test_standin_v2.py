"""Stand-in v2 and the holdout rollouts: added without moving a byte of the older data, and
built so that dev shows a gain the holdout cannot confirm, for the reasons the data README
gives."""

from __future__ import annotations

from collections import Counter

import pytest

from course import data, datagen
from course.data import provenance
from course.paths import DATA_DIR, sha256_file
from course.scorer import score

ROLLOUTS = DATA_DIR / "rollouts"
PROBLEMS = {"dev": DATA_DIR / "problems" / "dev.jsonl",
            "holdout": DATA_DIR / "problems" / "holdout.jsonl"}
PAIRS = {"dev": ("frozen_v1", "frozen_v2"), "holdout": ("holdout_v1", "holdout_v2")}

FIRST_RELEASE = {
    "problems/dev.jsonl": "1145bdd8f6b6a9bcb824ada2984e9cb41fa43a876109a77caa72557312733004",
    "problems/holdout.jsonl": "baee6860299be9b8e19c7b551f4c88a38134b0e19f194494fd83c68e826ed682",
    "rollouts/frozen_v1.jsonl": "8994f417849123b261c720c7d748f01556596aa04584931d898c616c50dab79c",
    "selection/pack_n8.jsonl": "f825659b6d8c529c1088861ee27b1f7f9b08fdd8738e151cddbde16ad3d3a99e",
}
"""The generated files of the first release, as run_001 and run_002 pinned them."""


@pytest.fixture(scope="module")
def generated():
    return datagen.build_data()


def load(name: str) -> list[dict]:
    return data.load_rollouts(ROLLOUTS / f"{name}.jsonl")


def test_adding_the_new_files_moved_no_byte_of_the_first_release(generated):
    for name, sha in FIRST_RELEASE.items():
        assert datagen.sha256_bytes(generated[name]) == sha, name
        assert sha256_file(DATA_DIR / name) == sha, name


def test_the_new_files_are_generated_and_described(generated):
    for name in ("holdout_v1", "frozen_v2", "holdout_v2"):
        path = ROLLOUTS / f"{name}.jsonl"
        assert path.read_bytes() == generated[f"rollouts/{name}.jsonl"]
        entry = provenance(path)
        assert "no model run" in entry["made_by"]
        assert entry["prompt_version"] == datagen.PROMPT_VERSION
        assert entry["records"] == len(load(name))
    readme = generated["README.md"].decode()
    assert "## Stand-in v2" in readme and "rollouts/holdout_v2.jsonl" in readme


def test_v1_and_v2_record_the_same_sampling_settings_but_for_the_policy():
    for v1_name, v2_name in PAIRS.values():
        v1 = provenance(ROLLOUTS / f"{v1_name}.jsonl")["sampling"]
        v2 = provenance(ROLLOUTS / f"{v2_name}.jsonl")["sampling"]
        assert (v1["policy"], v2["policy"]) == (datagen.POLICY, datagen.POLICY_V2)
        assert {**v1, "policy": None} == {**v2, "policy": None}


def test_holdout_v1_is_stand_in_v1_at_its_rates():
    rollouts = load("holdout_v1")
    assert [r["id"] for r in rollouts] == [p["id"] for p in data.load_problems(PROBLEMS["holdout"])]
    counts = Counter(r["policy_mode"] for r in rollouts)
    assert dict(counts) == {mode: n for mode, n in datagen.quotas(25).items() if n}


@pytest.mark.parametrize("split", ["dev", "holdout"])
def test_v2_changes_a_completion_only_where_its_policy_changed(split):
    problems = {p["id"]: p for p in data.load_problems(PROBLEMS[split])}
    v1_name, v2_name = PAIRS[split]
    for before, after in zip(load(v1_name), load(v2_name), strict=True):
        expected_mode = datagen.v2_mode(before["policy_mode"], split)
        assert after["policy_mode"] == expected_mode
        if expected_mode == before["policy_mode"]:
            assert after["completion"] == before["completion"]  # the same random draw
        else:  # every change v2 makes is a fix
            assert score(problems[after["id"]], after["completion"])["reward"] == 1.0


def test_v2_rates_sum_to_one_and_move_mass_only_to_correct():
    for split in ("dev", "holdout"):
        rates = datagen.v2_rates(split)
        assert sum(rates.values()) == pytest.approx(1.0)
        for mode, rate in rates.items():
            if mode != "correct":
                assert rate <= datagen.POLICY_MODES[mode].rate
    assert datagen.v2_rates("dev")["correct"] == pytest.approx(0.52 + 0.24)
    assert datagen.v2_rates("holdout")["correct"] == pytest.approx(0.52 + 0.06)


def test_the_dev_only_patches_never_reach_the_holdout():
    for v1, v2 in zip(load("holdout_v1"), load("holdout_v2"), strict=True):
        if v1["policy_mode"] in datagen.V2_DEV_PATCHES:
            assert v2 == v1
    changed = [v2["id"] for v1, v2 in zip(load("holdout_v1"), load("holdout_v2"), strict=True)
               if v1 != v2]
    assert changed == ["hold-013"]  # the one markdown_bold completion, fixed everywhere
