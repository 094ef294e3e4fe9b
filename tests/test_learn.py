"""`course learn` and its run: validated settings, one-line errors, deterministic files, a
slow-motion story whose numbers add up, and learning that moves what the scorer measures."""

import json
import re

import numpy as np
import pytest

from course.cli import main
from course.learn import (
    ADVANTAGES,
    GRPO_EPSILON,
    SLOW_MOTION_LEGEND,
    LearnConfig,
    advantages,
    ascend,
    collect,
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
    ({"advantage": "ppo"}, "advantage"),
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


def test_the_command_trains_with_each_advantage_rule(capsys):
    for rule in ADVANTAGES:
        assert main(["learn", "--advantage", rule, "--steps", "2", "--batch-size", "2"]) == 0
        assert capsys.readouterr().out.splitlines()[-1].startswith("   2  ")


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


# -- a stable learner: the claims of `LearnConfig.lr`, on several seeds ---------------------------

def final_values(beta: float, seed: int, steps: int = 60) -> tuple[float, float]:
    """(strict pass@1, KL) averaged over the last 10 steps of a strict run at lr 1."""
    logs = train(LearnConfig(beta=beta, lr=1.0, steps=steps, seed=seed),
                 np.random.default_rng(seed)).logs[-10:]
    return float(np.mean([e.pass_at_1 for e in logs])), float(np.mean([e.kl for e in logs]))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_strong_kl_penalty_does_not_knock_the_format_over_and_kl_falls_as_beta_grows(seed):
    # before each table's step was divided by the problems sharing it, β = 1 collapsed the
    # strict policy (pass@1 0.00-0.14 after 100 steps in five seeds, KL 4-6 nats)
    runs = {beta: final_values(beta, seed) for beta in (0.0, 0.2, 1.0)}
    assert runs[1.0][0] >= 0.45                       # the reference starts at 0.446
    kls = [runs[beta][1] for beta in (0.0, 0.2, 1.0)]
    assert kls[0] > kls[1] > kls[2] > 0


def test_each_table_moves_by_the_mean_pull_of_the_prompts_that_share_it():
    problems, reference, _ = setup(SHORT)
    learner = learner_for(reference, len(problems))
    assert learner.shared_by == (len(problems), 1)
    grads = [np.ones_like(table) for table in learner.tables]
    ascend(learner, grads, lr=3.0)
    assert np.allclose(learner.tables[0], 3.0 / len(problems))    # shared by all 60 prompts
    assert np.allclose(learner.tables[1], 3.0)                      # a problem's own rows


# -- the advantage rules of the RLVR family --------------------------------------------------------

def test_the_three_advantage_rules_on_a_hand_worked_group():
    shaped = np.array([1.0, 0.0, 0.0, 1.0,  1.0, 1.0, 1.0, 1.0])   # two prompts, B = 4
    rloo = advantages(shaped, 4, "rloo")
    dr = advantages(shaped, 4, "dr_grpo")
    grpo = advantages(shaped, 4, "grpo")
    np.testing.assert_allclose(rloo[:4], [2 / 3, -2 / 3, -2 / 3, 2 / 3])   # R - mean of others
    np.testing.assert_allclose(dr[:4], [0.5, -0.5, -0.5, 0.5])             # R - group mean
    np.testing.assert_allclose(dr, (1 - 1 / 4) * rloo)                     # a shorter step
    # the group's std is 0.5: GRPO doubles Dr. GRPO's advantages here
    np.testing.assert_allclose(grpo[:4], np.array([1, -1, -1, 1]) * 0.5 / (0.5 + GRPO_EPSILON))
    for rule in ADVANTAGES:        # the second group's rewards are all equal: no signal at all
        assert (advantages(shaped, 4, rule)[4:] == 0).all()


def test_grpo_divides_each_completion_by_its_length_and_the_others_do_not():
    problems, reference, _ = setup(SHORT)
    for rule in ADVANTAGES:
        config = LearnConfig(steps=1, batch_size=4, advantage=rule)
        learner = learner_for(reference, len(problems))
        update = collect(learner, problems, config, np.random.default_rng(0))
        expected = (update.advantage / update.rollouts.lengths if rule == "grpo"
                    else update.advantage)
        np.testing.assert_allclose(update.weight, expected)


# -- dynamic sampling, a held-out split, the stable region -----------------------------------------

def test_dynamic_sampling_draws_all_equal_groups_again_and_counts_what_it_drew():
    problems, reference, _ = setup(SHORT)
    plain_config = LearnConfig(steps=1, batch_size=4)
    dynamic_config = LearnConfig(steps=1, batch_size=4, redraws=3)
    plain_update = collect(learner_for(reference, len(problems)), problems, plain_config,
                           np.random.default_rng(0))
    dynamic_update = collect(learner_for(reference, len(problems)), problems, dynamic_config,
                             np.random.default_rng(0))

    def all_equal(update) -> int:
        groups = update.reward.reshape(-1, 4)
        return int((groups.min(axis=1) == groups.max(axis=1)).sum())

    assert plain_update.drawn == 4 * len(problems)
    assert all_equal(plain_update) > all_equal(dynamic_update) >= 0
    # every group drawn again is a whole group: the extra draws come in fours
    assert dynamic_update.drawn > plain_update.drawn
    assert (dynamic_update.drawn - plain_update.drawn) % 4 == 0
    # a group is drawn again only while all-equal, so at most 3 times as many extra draws
    assert dynamic_update.drawn <= plain_update.drawn + 3 * 4 * all_equal(plain_update)
    # the texts, ids and rewards still belong together after the re-draws
    from course.learn import rewards_of
    from course.rubrics import RUBRICS
    assert dynamic_update.rollouts.texts == [
        reference.vocab.render(row.tolist()) for row in dynamic_update.rollouts.ids]
    np.testing.assert_array_equal(
        dynamic_update.reward, rewards_of(RUBRICS["strict"], problems, dynamic_update.rollouts))


def test_a_held_out_prompt_is_never_trained_on():
    config = LearnConfig(steps=5, batch_size=4, held_out=True)
    run = train(config, np.random.default_rng(0))
    rows = run.learner.tables[1].reshape(len(run.problems), -1, run.learner.vocab.size)
    assert np.abs(rows[0::2]).sum() > 0                 # the trained prompts' own rows moved
    assert (rows[1::2] == 0).all()                      # the held-out prompts' rows never did
    assert run.learner.shared_by == ((len(run.problems) + 1) // 2, 1)


@pytest.mark.parametrize(("beta", "lr", "warns"), [
    (0.0, 10.0, False), (0.2, 10.0, False), (2.0, 1.0, False),     # beta x lr <= 2, lr <= 10
    (0.0, 30.0, True), (0.5, 10.0, True), (2.0, 3.0, True)])       # measured to run away
def test_a_config_outside_the_measured_stable_region_warns(beta, lr, warns):
    import warnings

    from course.learn import UnstableConfigWarning
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        LearnConfig(beta=beta, lr=lr)
    said = [str(w.message) for w in caught if w.category is UnstableConfigWarning]
    assert len(said) == warns and all("\n" not in line for line in said)


def test_the_command_warns_in_one_line_outside_the_stable_region(capsys):
    assert main(["learn", "--beta", "2", "--lr", "3", "--steps", "1", "--batch-size", "2"]) == 0
    err = capsys.readouterr().err
    assert err == ("course learn: warning: beta x lr = 6 is above 2: the KL term overshoots "
                   "and the policy may drift further, not less (keep lr <= 1 at beta 2)\n")


def test_each_distinct_completion_is_scored_once():
    from course.learn import rewards_of
    from course.token_policy import Rollouts
    calls = []

    def counting(problem, text):
        calls.append((problem["id"], text))
        return {"reward": float(text == "Final: 1")}

    problems = [{"id": "a"}, {"id": "b"}]
    rollouts = Rollouts(np.array([0, 0, 1, 1, 0]), np.zeros((5, 1), int),
                        ["Final: 1", "Final: 1", "Final: 1", "x", "x"])
    assert rewards_of(counting, problems, rollouts).tolist() == [1, 1, 1, 0, 0]
    assert sorted(calls) == [("a", "Final: 1"), ("a", "x"), ("b", "Final: 1"), ("b", "x")]


def test_at_the_matched_step_size_grpos_first_update_is_as_long_as_rloos():
    from dataclasses import replace

    from course.reports.learn_family import CONFIG, first_step_length, matched_lr
    lr = matched_lr(CONFIG)
    rloo = first_step_length(replace(CONFIG, advantage="rloo"))
    grpo = first_step_length(replace(CONFIG, advantage="grpo", lr=lr))
    assert lr > CONFIG.lr                        # at the same lr, GRPO's steps are shorter
    assert abs(grpo / rloo - 1) < 0.05 / lr      # equal but for lr's rounding to 0.1


def test_the_equal_samples_arm_draws_as_many_samples_as_dynamic_sampling():
    """`rloo_equal_samples` (run_020) is plain RLOO run for as many steps as draw what
    `rloo_dynamic` drew in 150: within 1% of its median per prompt, and measured at its end."""
    from course.paths import RUNS_DIR
    from course.reports.learn_family import CONFIG, EQUAL_SAMPLES_STEPS, arms, checkpoints_of
    from course.runs import read_json

    drawn = read_json(RUNS_DIR / "run_020", "summary.json")["drawn_per_prompt"]["strict"]
    assert drawn["rloo_equal_samples"]["median"] == EQUAL_SAMPLES_STEPS * CONFIG.batch_size
    assert abs(drawn["rloo_equal_samples"]["median"] / drawn["rloo_dynamic"]["median"] - 1) < 0.01
    long = arms(CONFIG)["strict"]["rloo_equal_samples"]
    assert (long.redraws, long.steps) == (0, EQUAL_SAMPLES_STEPS)
    assert checkpoints_of(long) == (0, EQUAL_SAMPLES_STEPS)
