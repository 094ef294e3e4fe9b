"""The checks that the maps, the context pages, the home page and the exercise pages made with
bare asserts in their blocks, until each of those blocks printed what it computes (issue 31).

A page shows its reader numbers and verdicts; the checks that hold them belong here. Each test
runs the page's own block, as its Markdown source holds it today (with the blocks it continues,
`{.python continuation}`), in a scratch folder, and asserts on the names the block leaves. So a
page whose code changes is checked as it now reads, and a check fails with the page's name.
tests/site/test_blocks_show_output.py holds the other half: every such block shows its output.
"""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from course.check import EXERCISES
from course.paths import DATA_DIR, REPO_ROOT
from course.scorer import SCORER_VERSION, score
from course.selection import pass_at_k
from course_site.outputs import runnable_blocks
from course_site.run_blocks import chains


@pytest.fixture(autouse=True)
def _in_a_scratch_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Blocks run where a reader runs them: a block may write a file (`my_first_try/`)."""
    monkeypatch.chdir(tmp_path)


def run_block(page: str, containing: str) -> dict[str, Any]:
    """The names left by the one runnable block of `page` whose code holds `containing`, run
    after the blocks it continues."""
    lines = (REPO_ROOT / page).read_text(encoding="utf-8").split("\n")
    blocks = runnable_blocks(lines, page)
    found = [i for i, (_, block) in enumerate(blocks) if containing in block["code"]]
    assert len(found) == 1, f"{page}: {len(found)} blocks hold {containing!r}, not one"
    chain = next(c for c in chains([block["continuation"] for _, block in blocks])
                 if found[0] in c)                      # grouped as the site groups them
    names: dict[str, Any] = {"__name__": "__main__"}
    for index in chain[:chain.index(found[0]) + 1]:
        fence, block = blocks[index]
        exec(compile(block["code"], f"{page}:{fence.open + 1}", "exec"), names)
    return names


# -- the home page and the maps' index ------------------------------------------------------------

def test_home_the_verifier_accepts_the_running_example() -> None:
    result = run_block("docs/index.md", 'score(example, "Final: 323")')["result"]
    assert result["reward"] == 1.0
    assert result["details"]["code"] == "correct"


def test_home_the_verifier_refuses_a_leading_zero() -> None:
    result = run_block("docs/index.md", '"Final: 0323"')["result"]
    assert result["reward"] == 0.0
    assert result["details"]["code"] == "non_canonical_integer"


def test_maps_index_the_running_example() -> None:
    result = run_block("docs/maps/index.md", "score(example")["result"]
    assert result["reward"] == 1.0
    assert result["details"]["code"] == "correct"


# -- the three loops ------------------------------------------------------------------------------

THREE_LOOPS = "docs/maps/three-loops.md"


def test_three_loops_loop_a_mean_and_causes() -> None:
    names = run_block(THREE_LOOPS, "mean_reward =")
    assert names["mean_reward"] == names["pass_rate"] == 0.4  # with 0/1 rewards they coincide
    assert Counter(names["codes"]) == {"correct": 2, "no_final_prefix": 1, "wrong_answer": 1,
                                       "non_ascii_character": 1}


def test_three_loops_loop_b_pick_and_pass_at_k() -> None:
    names = run_block(THREE_LOOPS, "def pass_at_k")
    assert names["samples"][names["best"]] == "Final: 323"
    n, c, page_pass_at_k = names["n"], names["c"], names["pass_at_k"]
    assert page_pass_at_k(n, c, 1) == 0.25        # one draw: still 1 chance in 4
    assert page_pass_at_k(n, c, 2) == 0.5
    assert page_pass_at_k(n, c, 4) == 1.0         # the best of all four always finds it
    for k in range(1, n + 1):                     # "course.selection has the same one"
        assert math.isclose(page_pass_at_k(n, c, k), pass_at_k(n, c, k))


def test_three_loops_loop_c_one_reinforce_step() -> None:
    names = run_block(THREE_LOOPS, "def reinforce_step")
    softmax = names["softmax"]
    assert names["rewards"].tolist() == [1.0, 0.0, 0.0]
    assert round(softmax(names["theta0"])[0], 3) == 0.333
    assert round(names["after_success"][0], 3) == 0.452   # drew the right one, A > 0: up
    assert round(names["after_failure"][1], 3) == 0.233   # drew "323", A < 0: down...
    assert round(names["after_failure"][0], 3) == 0.384   # ...and the right answer gains


# -- macro and micro, the bandit special case, do not confuse -------------------------------------

MACRO_MICRO = "docs/maps/macro-micro.md"


def test_macro_micro_one_completion_as_tokens() -> None:
    names = run_block(MACRO_MICRO, "p_token =")
    assert names["split"] == [(19918, "Final"), (25, ":"), (220, " "), (15726, "323")]
    assert math.isclose(math.exp(names["log_p"]), names["p_completion"])
    assert round(names["p_completion"], 3) == 0.325
    assert names["reward"] == 1.0
    assert round(names["surrogate"], 3) == 0.562


def test_macro_micro_token_paths_meet_in_text() -> None:
    names = run_block(MACRO_MICRO, "near_miss =")
    tokenize, example = names["tokenize"], names["example"]
    path_a, path_b, near_miss = names["path_a"], names["path_b"], names["near_miss"]
    assert [piece for _, piece in tokenize("Final: 323")] == path_a
    assert [piece for _, piece in tokenize("Final:  323")] == near_miss
    assert "".join(path_a) == "".join(path_b)
    assert score(example, "".join(path_a)) == score(example, "".join(path_b))
    assert score(example, "".join(near_miss))["details"]["code"] == "bad_separator"


def test_bandit_special_case_return_equals_reward() -> None:
    names = run_block("docs/maps/bandit-special-case.md", "def returns_to_go")
    step_rewards, returns_to_go = names["step_rewards"], names["returns_to_go"]
    assert names["tokens"] == ["Final", ":", " ", "323"]   # the space is a token of its own
    assert sum(step_rewards) == names["final_reward"]       # micro return = macro reward
    assert returns_to_go(step_rewards) == [1.0] * 4          # every token sees the same return
    assert names["discounted"] == [0.73, 0.81, 0.9, 1.0]


def test_do_not_confuse_advantages_are_relative() -> None:
    names = run_block("docs/maps/do-not-confuse.md", "def advantages")
    mixed = names["mixed"]
    assert np.allclose(mixed, [1 / 3, 1 / 3, 1 / 3, -1.0])  # the odd one out: pushed hardest
    assert np.allclose(names["all_right"], 0.0)             # all correct: nothing to learn
    assert np.allclose(names["inclusive"], (1 - 1 / 4) * mixed)


def test_verifier_vs_reward_model_one_verdict_per_version() -> None:
    names = run_block("docs/maps/verifier-vs-reward-model.md", "verdicts =")
    assert names["verdicts"] == {"wrong_answer"}
    assert names["SCORER_VERSION"] == SCORER_VERSION == "strict-v1"


# -- the context pages ----------------------------------------------------------------------------

def test_process_vs_outcome_the_two_disagree() -> None:
    names = run_block("docs/context/process-vs-outcome.md", "def step_is_right")
    step_is_right, example = names["step_is_right"], names["example"]
    (lucky, lucky_answer), (careful, careful_answer) = names["lucky"], names["careful"]
    assert [step_is_right(step) for step in lucky] == [True, False, False]
    assert score(example, lucky_answer)["reward"] == 1.0
    assert all(step_is_right(step) for step in careful)
    assert score(example, careful_answer)["details"]["code"] == "wrong_answer"


def test_process_vs_outcome_working_is_refused() -> None:
    result = run_block("docs/context/process-vs-outcome.md", "with_working =")["result"]
    assert result["details"]["code"] == "multiple_lines"


def test_reward_models_bradley_terry_for_one_pair() -> None:
    names = run_block("docs/context/reward-models.md", "def sigmoid")
    assert round(names["p_prefer"], 3) == 0.731
    assert round(names["loss"], 3) == 0.313
    assert math.isclose(names["shifted"], names["p_prefer"])   # shift-invariant


def test_reward_models_the_toy_prefers_a_long_wrong_answer() -> None:
    names = run_block("docs/context/reward-models.md", "long_wrong, short_right")
    diff, w, reward = names["diff"], names["w"], names["reward"]
    assert (diff @ w > 0).all()                   # it agrees with every comparison...
    assert names["agrees"] == len(diff)
    assert reward(names["long_wrong"]) > reward(names["short_right"])   # ...and prefers length


VERIFICATION = "docs/context/verification-asymmetry.md"


def test_verification_asymmetry_finding_against_checking() -> None:
    names = run_block(VERIFICATION, "tries = 0")
    assert (names["d"], names["n"] // names["d"]) == (17, 19)
    assert names["tries"] == 16


def test_verification_asymmetry_oversampling() -> None:
    at_least_one = run_block(VERIFICATION, "def at_least_one")["at_least_one"]
    assert at_least_one(1) == 0.25
    assert round(at_least_one(4), 3) == 0.684
    assert round(at_least_one(16), 2) == 0.99


def test_verification_asymmetry_vote_against_verifier() -> None:
    names = run_block(VERIFICATION, "majority, count")
    assert (names["majority"], names["count"]) == (324, 3)   # the favourite answer is wrong
    assert names["picked"] == "Final: 323"


def test_verifier_libraries_containment_pays_every_hedge() -> None:
    names = run_block("docs/context/verifier-libraries.md", "def contains_answer")
    contains_answer, example, hedges = (names["contains_answer"], names["example"],
                                        names["hedges"])
    assert [contains_answer(example, hedge) for hedge in hedges] == [1.0, 1.0, 1.0]
    assert [score(example, hedge)["reward"] for hedge in hedges] == [0.0, 0.0, 0.0]


# -- the exercise pages ---------------------------------------------------------------------------

@pytest.mark.skipif(not (REPO_ROOT / "teacher").is_dir(),
                    reason="the block is teacher-only: the students' copy drops it with teacher/")
def test_exercises_index_what_the_students_copy_leaves_out() -> None:
    names = run_block("docs/exercises/index.md", "export-ignore")
    assert names["ignored"] == ["/teacher/"]      # only the solutions stay out of the copy
    for which in ("m0", "m5"):                    # the kata keys are not in data/
        assert not (DATA_DIR / "kata" / f"teacher_key_{which}.json").exists()
    assert {"kata", "kata_m5"} <= set(EXERCISES)


def test_kata_m5_half_the_records_are_by_todays_scorer() -> None:
    names = run_block("docs/exercises/kata_m5.md", "versions = Counter")
    assert len(names["kata"]) == 10
    assert names["versions"][SCORER_VERSION] == 5


def test_kl_the_two_rules_for_zeros() -> None:
    names = run_block("docs/exercises/kl.md", "kl_divergence(p, q)")
    kl_divergence, p, q = names["kl_divergence"], names["p"], names["q"]
    assert math.isclose(kl_divergence(p, q), math.log(2))   # p's zero contributes nothing
    assert kl_divergence(q, p) == math.inf                   # q has mass where p has none


def test_pick_best_ties_are_the_normal_case() -> None:
    names = run_block("docs/exercises/pick_best.md", "tied = 0")
    assert names["tied"] > len(names["packs"]) // 2


def test_reinforce_step_one_step_worked_out() -> None:
    new_theta = run_block("docs/exercises/reinforce_step.md", "new_theta =")["new_theta"]
    assert np.allclose(new_theta, [0.375, -0.125, -0.125, -0.125])
    assert np.isclose(new_theta.sum(), 0.0)       # the gradient's entries sum to 0


def test_a_block_is_found_by_what_it_holds() -> None:
    """Guards the tests above against checking another block than the one they name."""
    with pytest.raises(AssertionError, match="0 blocks hold"):
        run_block("docs/maps/three-loops.md", "no block holds this")
