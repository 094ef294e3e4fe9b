"""Loop B, selection: the estimator against brute force, the picks' tie rule, the two controls,
and a run whose numbers agree with each other."""

from __future__ import annotations

import json
import math
from fractions import Fraction
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest

from course import cli, data
from course.data import DataError
from course.paths import DATA_DIR, RUNS_DIR
from course.reports.selection import build_run
from course.runs import read_files
from course.selection import (
    SelectionConfig,
    best_of_n,
    majority_vote,
    pass_at_k,
    pick_best,
    random_pick,
    score_samples,
    vote_counts,
    why_no_sample_passes,
)


def samples_with(rewards: list[float]) -> list[dict]:
    """Scored samples s0, s1, ... with the given rewards (texts are irrelevant to the picks)."""
    return [{"sample_id": f"s{i}", "completion": f"Final: {i}", "reward": r}
            for i, r in enumerate(rewards)]


def texts(*completions: str) -> list[dict]:
    return [{"sample_id": f"s{i}", "completion": text} for i, text in enumerate(completions)]


# -- the estimator -----------------------------------------------------------------------------

def brute_force_pass_at_k(n: int, c: int, k: int) -> Fraction:
    """Share of the k-subsets of n samples (the first c correct) holding a correct one."""
    subsets = list(combinations(range(n), k))
    return Fraction(sum(any(i < c for i in subset) for subset in subsets), len(subsets))


ALL_SMALL = [(n, c, k) for n in range(1, 9) for c in range(n + 1) for k in range(1, n + 1)]


@pytest.mark.parametrize(("n", "c", "k"), ALL_SMALL)
def test_pass_at_k_equals_brute_force_over_all_subsets(n, c, k):
    assert pass_at_k(n, c, k) == pytest.approx(float(brute_force_pass_at_k(n, c, k)), abs=1e-12)


@pytest.mark.parametrize(("c", "k"), [(1, 1), (1, 100), (3, 10), (20, 1), (20, 50), (100, 5),
                                      (150, 30), (199, 1), (200, 200), (0, 7), (5, 196)])
def test_pass_at_k_large_n_matches_exact_binomials(c, k):
    n = 200
    exact = 1 - Fraction(math.comb(n - c, k), math.comb(n, k))
    assert pass_at_k(n, c, k) == pytest.approx(float(exact), rel=1e-12, abs=1e-15)


@pytest.mark.parametrize(("n", "c", "k", "expected"), [
    (8, 0, 1, 0.0), (8, 0, 8, 0.0),          # no correct sample: no subset can pass
    (8, 8, 1, 1.0), (8, 3, 6, 1.0),          # n - c < k: every subset holds a correct one
    (8, 3, 1, 3 / 8), (10, 1, 1, 0.1),       # pass@1 is the plain success rate c/n
    (8, 1, 8, 1.0), (4, 2, 2, 5 / 6),        # 1 - C(2,2)/C(4,2) = 1 - 1/6
])
def test_pass_at_k_hand_solved_values(n, c, k, expected):
    assert pass_at_k(n, c, k) == pytest.approx(expected, abs=1e-15)


@pytest.mark.parametrize(("n", "c", "k", "message"), [
    (5, 0, 6, "k must be in"),     # the known bug elsewhere returns 1.0 here
    (5, 2, 6, "k must be in"),
    (5, 2, 0, "k must be in"),     # "at least one of zero samples": rejected, not 0.0
    (5, 2, -1, "k must be in"),
    (0, 0, 1, "n must be at least 1"),
    (-3, 0, 1, "n must be at least 1"),
    (5, 6, 1, "c must be in"),
    (5, -1, 1, "c must be in"),
    (5.0, 2, 1, "n must be an integer"),
    (5, 2.5, 1, "c must be an integer"),
    (5, True, 1, "c must be an integer"),
])
def test_pass_at_k_rejects_invalid_arguments(n, c, k, message):
    with pytest.raises(ValueError, match=message):
        pass_at_k(n, c, k)


def test_pass_at_k_accepts_numpy_integers():
    assert pass_at_k(np.int64(8), np.int64(2), np.int64(1)) == pytest.approx(0.25)


# -- the picks ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("rewards", "chosen"), [
    ([0.0], "s0"),
    ([1.0], "s0"),
    ([0.0, 0.0, 0.0], "s0"),            # all tied (all wrong): the first, as at N=1
    ([1.0, 1.0, 1.0], "s0"),
    ([0.0, 1.0, 1.0], "s1"),            # tie among the best: the earliest of them
    ([1.0, 0.0, 1.0], "s0"),
    ([0.0, 0.0, 0.0, 1.0], "s3"),       # a late strictly better sample still wins
    ([0.2, 0.7, 0.5, 0.7], "s1"),       # works for non-binary rewards too
])
def test_pick_best_takes_highest_reward_and_first_of_ties(rewards, chosen):
    assert pick_best(samples_with(rewards))["sample_id"] == chosen


def test_tie_rule_does_not_depend_on_completion_text():
    pack = samples_with([1.0, 1.0])
    pack[0]["completion"], pack[1]["completion"] = "Final: 9", "Final: 1"  # s1 sorts first
    assert pick_best(pack)["sample_id"] == "s0"


def test_pick_best_refuses_an_empty_pack():
    with pytest.raises(ValueError, match="no samples"):
        pick_best([])


@pytest.mark.parametrize("rewards", [[0.0, 1.0, 1.0], [1.0, 0.0], [0.0, 0.0, 0.0, 1.0]])
def test_best_of_1_is_the_first_sample(rewards):
    pack = samples_with(rewards)
    assert best_of_n(pack, 1) is pack[0]


@pytest.mark.parametrize(("rewards", "n", "chosen"), [
    ([0.0, 0.0, 1.0, 1.0], 2, "s0"),    # the correct samples lie beyond the first 2
    ([0.0, 0.0, 1.0, 1.0], 3, "s2"),
    ([0.0, 0.0, 1.0, 1.0], 4, "s2"),    # growing N keeps the pick unless strictly beaten
])
def test_best_of_n_uses_only_the_first_n(rewards, n, chosen):
    assert best_of_n(samples_with(rewards), n)["sample_id"] == chosen


@pytest.mark.parametrize("n", [0, -1, 4])
def test_best_of_n_rejects_n_outside_the_pack(n):
    with pytest.raises(ValueError, match="n must be in"):
        best_of_n(samples_with([0.0, 1.0, 0.0]), n)


# -- the controls ------------------------------------------------------------------------------

class EveryIndex:
    """A stand-in Generator whose `integers(n)` returns 0, 1, ..., n-1 in turn."""

    def __init__(self):
        self.calls = 0

    def integers(self, n):
        index, self.calls = self.calls % n, self.calls + 1
        return index


@pytest.mark.parametrize(("rewards", "n"), [
    ([1, 0, 0, 1, 0, 0, 0, 1], 8), ([1, 0, 0, 1, 0, 0, 0, 1], 4), ([0, 0, 1], 3), ([1], 1)])
def test_random_pick_expectation_is_pass_at_1_exactly(rewards, n):
    """Each of the first n samples is reachable once per n draws, so the exact average over the
    uniform choice is the mean reward of the first n: c/n = pass@1."""
    pack, rng = samples_with([float(r) for r in rewards]), EveryIndex()
    picks = [random_pick(pack, n, rng) for _ in range(n)]
    assert sorted(p["sample_id"] for p in picks) == [f"s{i}" for i in range(n)]
    c = int(sum(rewards[:n]))
    assert Fraction(int(sum(p["reward"] for p in picks)), n) == Fraction(c, n)
    assert sum(p["reward"] for p in picks) / n == pytest.approx(pass_at_k(n, c, 1))


def test_random_pick_with_a_real_generator_averages_to_pass_at_1():
    pack = samples_with([1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0])  # s8 is outside n=8
    rng, draws = np.random.default_rng(123), 20_000
    rewards = [random_pick(pack, 8, rng)["reward"] for _ in range(draws)]
    p = pass_at_k(8, 2, 1)
    assert abs(np.mean(rewards) - p) < 4 * math.sqrt(p * (1 - p) / draws)


def test_random_pick_never_looks_beyond_the_first_n():
    pack, rng = samples_with([0.0] * 8), np.random.default_rng(0)
    assert {random_pick(pack, 3, rng)["sample_id"] for _ in range(200)} == {"s0", "s1", "s2"}


@pytest.mark.parametrize(("completions", "n", "chosen"), [
    (("Final: 5", "Final: 7", "Final: 7"), 3, "s1"),                  # plain majority
    (("Final: 5", "Final: 7"), 2, "s0"),                              # 1-1 tie: first answer
    (("nope", "Final: 7", "Final: 5", "Final: 5", "Final: 7"), 5, "s1"),  # 2-2 tie: 7 came first
    (("7", "7", "7", "Final: 3"), 4, "s3"),                           # unparseable cast no vote
    (("Final: 007", "Final: 7 apples", "Final: 8"), 3, "s2"),         # nor non-canonical text
    (("Final: 1", "Final: 2", "Final: 2"), 2, "s0"),                  # only the first n vote
    (("Final: -4", "Final: 4", "Final: -4"), 3, "s0"),                # the winner's first sample
])
def test_majority_vote_on_hand_made_packs(completions, n, chosen):
    assert majority_vote(texts(*completions), n)["sample_id"] == chosen


@pytest.mark.parametrize("completions", [
    ("",), ("The answer is 7.", "final: 7", "Final:7", "Final: 7\nFinal: 8")])
def test_majority_vote_abstains_when_nothing_parses(completions):
    assert majority_vote(texts(*completions), len(completions)) is None


def test_majority_vote_needs_no_reward_and_no_expected_answer():
    pack = texts("Final: 3", "Final: 4", "Final: 4")  # no `reward`, no example anywhere
    assert vote_counts(pack) == {3: 1, 4: 2}
    assert list(vote_counts(texts("Final: 9", "Final: 1", "Final: 1"))) == [9, 1]


# -- why selection fails -----------------------------------------------------------------------

@pytest.mark.parametrize(("expected", "completions", "phrases"), [
    (323, ["Final: 342"] * 8,
     ["all 8 samples answer 342 (expected 323): a systematic misconception", "no amount"]),
    (47, ["Final: 77"] * 5 + ["Final: 48", "Final: 49", "Final: 77"],
     ["6 of 8 samples answer 77 (expected 47)", "majority vote picks; the other 2: 48 x1, 49 x1"]),
    (20, ["20", "The answer is 20.", "**Final: 20**", "50-6*5 = 20\nFinal: 20"],
     ["all 4 samples break the format (`no_final_prefix` x3, `multiple_lines` x1), yet every "
      "one contains the right number 20"]),
    (12, ["Final: 11 apples", "Final: 0012"],
     ["all 2 samples break the format (`not_an_integer` x1, `non_canonical_integer` x1). "
      "Selection can only pick"]),
    (3069828, ["Final: 3069818", "Final: 3609828", "Final: 3069827", "Final: 3O69828"],
     ["no two samples agree: 3069818 x1, 3609828 x1, 3069827 x1, `not_an_integer` x1 "
      "(expected 3069828)", "Scattered slips"]),
])
def test_why_no_sample_passes_reads_codes_and_answers(expected, completions, phrases):
    scored = score_samples({"expected_answer": expected}, texts(*completions))
    reason = why_no_sample_passes(scored)
    for phrase in phrases:
        assert phrase in reason


# -- the run -----------------------------------------------------------------------------------

# Expected answer and 8 completions per prompt; each row is a situation the lesson discusses.
FIXTURE = {
    "p-mixed": (323, ["Final: 324", "Final: 323", "Final: 323", "Final: 3 23", "Final: 322",
                      "Final: 323", "Final: 324", "final: 323"]),           # c = 3
    "p-misconception": (323, ["Final: 342"] * 8),                           # c = 0, one answer
    "p-format": (12, ["Final: 12 apples"] * 8),                             # c = 0, one code
    "p-easy": (7, ["Final: 7"] * 8),                                        # c = 8
    "p-crowd-wrong": (42, ["Final: 41"] * 5 + ["Final: 42", "Final: 42", "42"]),  # c = 2
    "p-late": (5, ["Final: 6"] * 7 + ["Final: 5"]),                         # c = 1, last sample
    "p-tie": (5, ["Final: 4", "Final: 5"] + ["5"] * 6),                     # c = 1, vote tie
}


PROVENANCE = {"prompt_version": "fixture-v1", "sampling": {"temperature": 0.8, "n": 8}}


def write_fixture(folder: Path, fixture=FIXTURE) -> tuple[Path, Path]:
    problems, pack = folder / "problems.jsonl", folder / "pack.jsonl"
    problems.write_text("".join(json.dumps({"id": pid, "prompt": f"question {pid}",
                                            "expected_answer": answer}) + "\n"
                                for pid, (answer, _) in fixture.items()))
    pack.write_text("".join(
        json.dumps({"id": pid, "samples": [
            {"sample_id": f"{pid}-s{i}", "completion": text, "policy_mode": "scripted"}
            for i, text in enumerate(completions)]}) + "\n"
        for pid, (_, completions) in fixture.items()))
    return problems, pack


@pytest.fixture
def fixture_config(tmp_path, monkeypatch) -> SelectionConfig:
    """The fixture pack as data files, with a fixed provenance (it has no registry entry)."""
    monkeypatch.setattr(data, "provenance", lambda path: PROVENANCE)
    problems, pack = write_fixture(tmp_path)
    return SelectionConfig(pack=pack, problems=problems)


def run_tables(files):
    summary = json.loads(files["summary.json"])
    rows = [json.loads(line) for line in files["selection_demo.jsonl"].decode().splitlines()]
    return summary, rows


def assert_consistent(summary, rows):
    """The identities the lesson states, checked on a run's own files."""
    n = summary["n_samples"]
    assert [row["c"] for row in rows] == [sum(s["reward"] for s in row["samples"]) for row in rows]
    assert summary["best_of_n"] == round(np.mean([row["c"] > 0 for row in rows]), 4)
    assert summary["best_of_n"] == summary["pass_at_n_oracle"] == summary["pass_at_k"][str(n)]
    assert summary["pass_at_1"] == round(np.mean([row["c"] / n for row in rows]), 4)
    assert summary["pass_at_k"]["1"] == summary["pass_at_1"] == summary["mean_reward"]
    assert summary["selection_fails"] == [row["id"] for row in rows if row["c"] == 0]
    pass_k = [summary["pass_at_k"][str(k)] for k in range(1, n + 1)]
    assert pass_k == sorted(pass_k)  # more samples never lower pass@k
    for row in rows:
        ids = {s["sample_id"]: s["reward"] for s in row["samples"]}
        assert row["first"] == {"sample_id": row["samples"][0]["sample_id"],
                                "reward": row["samples"][0]["reward"]}
        for pick in row["picks"]:
            for name in ("best_of_n", "random", "majority_vote"):
                if pick[name] is not None:
                    assert ids[pick[name]["sample_id"]] == pick[name]["reward"]
            assert pick["best_of_n"]["reward"] == max(
                s["reward"] for s in row["samples"][:pick["n"]])


def test_fixture_run_numbers(fixture_config):
    summary, rows = run_tables(build_run(fixture_config, "test", record_git=False))
    assert_consistent(summary, rows)
    assert [row["c"] for row in rows] == [3, 0, 0, 8, 2, 1, 1]
    assert summary["first_sample"] == round(1 / 7, 4)         # only p-easy's first is right
    assert summary["pass_at_1"] == round((3 + 8 + 2 + 1 + 1) / 56, 4)
    assert summary["best_of_n"] == round(5 / 7, 4)            # all but the two failures
    assert summary["majority_vote"] == round(2 / 7, 4)        # p-mixed (323 x3) and p-easy
    assert summary["selection_fails"] == ["p-misconception", "p-format"]
    assert summary["vote_misses"] == [
        {"id": "p-crowd-wrong", "voted": 41, "votes": 5, "correct_votes": 2},
        {"id": "p-late", "voted": 6, "votes": 7, "correct_votes": 1},
        {"id": "p-tie", "voted": 4, "votes": 1, "correct_votes": 1}]
    by_id = {row["id"]: row for row in rows}
    assert by_id["p-mixed"]["picks"][-1]["best_of_n"]["sample_id"] == "p-mixed-s1"
    assert by_id["p-late"]["picks"][-1]["best_of_n"]["sample_id"] == "p-late-s7"
    assert by_id["p-crowd-wrong"]["picks"][-1]["majority_vote"] == {
        "sample_id": "p-crowd-wrong-s0", "reward": 0.0, "answer": 41, "votes": 5}
    assert by_id["p-format"]["picks"][-1]["majority_vote"] is None


def test_fixture_run_readme_names_the_failures_and_the_oracle(fixture_config):
    text = build_run(fixture_config, "test", record_git=False)["README.md"].decode()
    assert "`p-misconception`: all 8 samples answer 342 (expected 323)" in text
    assert "`p-format`: all 8 samples break the format (`not_an_integer` x8), yet every" in text
    assert "- `p-tie`: 4 x1 against the right answer x1 (a tie, lost on first appearance)" in text
    assert "- `p-late`: 6 x7 against the right answer x1\n" in text
    assert "oracle" in text and "policy did not change" in text


def test_run_bytes_are_reproducible_and_the_seed_moves_only_the_random_control(fixture_config):
    first, again = (build_run(fixture_config, "test", record_git=False) for _ in range(2))
    assert first == again
    other = build_run(SelectionConfig(**{**fixture_config.__dict__, "seed": 7}), "test",
                      record_git=False)
    (s1, rows1), (s2, rows2) = run_tables(first), run_tables(other)
    strip = [{**p, "random": None} for row in rows1 for p in row["picks"]]
    assert strip == [{**p, "random": None} for row in rows2 for p in row["picks"]]
    assert [p["random"] for r in rows1 for p in r["picks"]] != [
        p["random"] for r in rows2 for p in r["picks"]]
    assert {k: v for k, v in s1.items() if k not in ("random_control", "by_n")} == {
        k: v for k, v in s2.items() if k not in ("random_control", "by_n")}


@pytest.mark.parametrize(("edit", "message"), [
    (lambda f: {**f, "p-easy": (7, ["Final: 7"] * 6)}, "has 6 samples but"),
    (lambda f: {**f, "p-extra": (1, ["Final: 1"] * 8)}, None),
])
def test_bad_packs_fail_with_a_data_error(tmp_path, fixture_config, edit, message):
    (tmp_path / "edited").mkdir()
    _, pack = write_fixture(tmp_path / "edited", edit(FIXTURE))
    config = SelectionConfig(pack=pack, problems=fixture_config.problems)
    with pytest.raises(DataError, match=message or "unknown problem id 'p-extra'"):
        build_run(config, "test", record_git=False)


def test_n_values_beyond_the_pack_fail_with_a_data_error(fixture_config):
    config = SelectionConfig(**{**fixture_config.__dict__, "n_values": (1, 16)})
    with pytest.raises(DataError, match="8 samples per prompt, but n_values asks for 16"):
        build_run(config, "test", record_git=False)


@pytest.mark.parametrize("n_values", [(), (0, 2), (4, 2), (2, 2)])
def test_config_rejects_bad_n_values(n_values):
    with pytest.raises(ValueError, match="n_values"):
        SelectionConfig(n_values=n_values)


def test_cli_saves_the_run_and_prints_the_comparison(fixture_config, tmp_path, capsys):
    out = tmp_path / "runs" / "run_x"
    argv = ["select", "--pack", str(fixture_config.pack), "--problems",
            str(fixture_config.problems), "--seed", "3", "--note", "cli fixture", "--out", str(out)]
    assert cli.main(argv) == 0
    printed = capsys.readouterr().out
    assert "best-of-n (oracle)" in printed and "p-misconception, p-format" in printed
    assert set(read_files(out)) == {"manifest.json", "summary.json", "selection_demo.jsonl",
                                    "pass_at_k.png", "README.md"}
    assert cli.main(argv) == 2  # runs are never overwritten
    assert "already exists" in capsys.readouterr().err


# -- the canonical run -------------------------------------------------------------------------

RUN_002 = RUNS_DIR / "run_002"


def test_canonical_run_numbers_are_consistent():
    summary, rows = run_tables(read_files(RUN_002))
    assert_consistent(summary, rows)
    assert summary["n_prompts"] == 60 and summary["n_samples"] == 8
    assert summary["first_sample"] < summary["majority_vote"] < summary["best_of_n"]


def test_canonical_run_finds_exactly_the_designed_cases():
    """What the run derives from the samples matches what the data generator designed."""
    summary, _ = run_tables(read_files(RUN_002))
    designed = data.provenance(DATA_DIR / "selection" / "pack_n8.jsonl")["designed_cases"]
    assert sorted(summary["selection_fails"]) == sorted(designed["all_fail"])
    assert set(designed["vote_disagrees"]) <= {miss["id"] for miss in summary["vote_misses"]}
    readme = read_files(RUN_002)["README.md"].decode()
    assert "`dev-009`: 6 of 8 samples answer 77 (expected 47): a systematic misconception" in readme
    assert "`dev-021`: all 8 samples break the format" in readme
    assert "`dev-002`: no two samples agree" in readme
