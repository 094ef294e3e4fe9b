"""Loop C on the tiny transformer (`course.tiny_learn`), on a tiny random model (width 8).

* One Adam step on one completion with a positive advantage raises that completion's
  log-probability; a negative one lowers it.
* The KL term: exactly 0 while the policy is its reference; otherwise the sampler's own
  log-probabilities minus the reference's (a second computation, one token at a time).
* A group whose rewards are all equal teaches nothing under rloo, grpo and dr_grpo (the
  parameters do not move) unless β > 0 and the policy has left its reference; then the KL
  term's advantage has its closed form, and steps pull the policy back toward its reference.
* The per-token weights: A on the completion's tokens, A / |y| under grpo, 0 elsewhere.
* Held-out prompts never reach an update, even when a checkpoint measures them.
* A run is a function of its seed, and measuring at checkpoints does not change it, nor does
  the watch batch of held-out prompts each step scores; the watch's pass@1 against a recount.
* `evaluate` against a recount: the same draws scored by hand, and pass@k from the product
  form of `course.selection.pass_at_k`.
* Every setting out of range is refused on one line.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from course import tiny_learn as tl
from course import tiny_lm as lm
from course import tiny_tasks as tasks
from course.selection import pass_at_k

MODEL = lm.ModelConfig(n_layer=1, n_embd=8, n_head=2, block_size=16)
FAST = tl.TinyLearnConfig(prompts=3, group=4, max_new=6, lr=1e-2, warmup=0)
"""Small steps of a few short completions, with a step size that moves the tiny model from the
first update (no warm-up)."""


def params_of(seed: int, spread: float = 0.0) -> lm.Params:
    """A tiny model at GPT-2's initialisation, plus N(0, spread²) on every parameter. Either
    way it writes junk that the strict scorer never pays."""
    rng = np.random.default_rng(seed)
    return {name: array + rng.normal(0.0, spread, array.shape)
            for name, array in lm.init_params(MODEL, rng).items()}


@pytest.fixture(scope="module")
def writer() -> lm.Params:
    """The tiny model pre-trained for 150 steps (about 0.3 s) on the scripted writer's lines
    that fit its 16 positions: it writes `Final: <two digits>` and rarely the right sum, so
    `contains_format` pays most of its completions and not all."""
    rng = np.random.default_rng(0)
    params = lm.init_params(MODEL, rng)
    corpus = tasks.write_corpus(tasks.WriterConfig(lines=2_000), rng)
    lines = [line.removesuffix(tasks.END) for line in corpus if len(line) <= MODEL.block_size]
    state = lm.adam_init(params)
    for _ in range(150):
        tokens, mask = lm.text_batch([lines[i] for i in rng.integers(len(lines), size=32)],
                                     [tasks.PROMPT_WIDTH] * 32)
        _, grads = lm.language_model_loss(params, MODEL, tokens, mask)
        params, state, _ = lm.adam_step(params, grads, state, lm.AdamConfig(lr=3e-2))
    return params


def equal(a: lm.Params, b: lm.Params) -> bool:
    return a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)


# -- one update -----------------------------------------------------------------------------------

@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_one_step_moves_a_completion_with_its_advantage(sign):
    params = params_of(0)
    samples = lm.sample(params, MODEL, ["12+34="], np.random.default_rng(1), max_new=6)
    weights = tl.token_weights(np.array([sign]), samples.mask, "rloo")
    config = tl.TinyLearnConfig(lr=1e-3, warmup=0)
    after, state, _ = tl.ascend(params, lm.adam_init(params), MODEL, samples.tokens, weights,
                                config, 1)
    before_lp, after_lp = (lm.sequence_log_probs(p, MODEL, samples.tokens, samples.mask)[0]
                           for p in (params, after))
    assert state.step == 1 and sign * (after_lp - before_lp) > 1e-4


def test_token_weights_put_the_advantage_on_the_completion_only():
    samples = lm.sample(params_of(0), MODEL, ["12+34="] * 3, np.random.default_rng(2),
                        max_new=6)
    advantage = np.array([0.5, -1.0, 2.0])
    mask = samples.mask
    rloo = tl.token_weights(advantage, mask, "rloo")
    assert np.array_equal(rloo, np.where(mask, advantage[:, None], 0.0))
    grpo = tl.token_weights(advantage, mask, "grpo")
    assert np.allclose(grpo.sum(axis=1), advantage)             # A / |y| on |y| tokens


def test_the_step_size_rises_linearly_over_the_warm_up_then_stays():
    config = tl.TinyLearnConfig(lr=3e-4, warmup=20)
    sizes = [tl.lr_at(update, config) for update in range(1, 31)]
    assert np.allclose(sizes[:20], 3e-4 * np.arange(1, 21) / 20) and set(sizes[19:]) == {3e-4}
    assert tl.lr_at(1, replace(config, warmup=0)) == 3e-4
    with pytest.raises(ValueError, match="warmup"):
        tl.TinyLearnConfig(warmup=-1)


def test_the_warm_up_keeps_the_first_update_near_the_base():
    """Adam's first update moves nearly every weight by the whole step size, whatever the
    gradient's scale: without a warm-up it moves the policy as far as ten warmed-up steps
    do. Here, the weights' largest change after one update (advantages from the KL term
    alone), with and without."""
    pool, base, policy = tasks.train_problems(), params_of(0), params_of(1, spread=0.3)
    moved = {}
    for warmup in (0, 20):
        config = replace(FAST, lr=1e-3, beta=0.5, warmup=warmup)
        batch = tl.collect(policy, base, MODEL, pool, config, np.random.default_rng(7))
        weights = tl.token_weights(batch.advantage, batch.mask, "rloo")
        after, _, _ = tl.ascend(policy, lm.adam_init(policy), MODEL, batch.tokens, weights,
                                config, 1)
        moved[warmup] = max(float(np.abs(after[k] - policy[k]).max()) for k in policy)
    assert moved[0] == pytest.approx(1e-3, rel=0.05)
    assert moved[20] == pytest.approx(moved[0] / 20, rel=0.05)


# -- the KL term ----------------------------------------------------------------------------------

def test_the_log_ratio_is_zero_at_the_reference_and_the_samplers_otherwise():
    pool, config = tasks.train_problems(), replace(FAST, beta=0.5)
    base, policy = params_of(0), params_of(1, spread=0.3)
    at_base = tl.collect(base, base, MODEL, pool, config, np.random.default_rng(3))
    assert np.all(at_base.log_ratio == 0.0)
    moved = tl.collect(policy, base, MODEL, pool, config, np.random.default_rng(3))
    s = moved.samples
    assert np.array_equal(moved.mask.sum(axis=1), s.lengths)     # cut after the longest only
    sampler = s.log_probs.sum(axis=1)                 # drawn one token at a time, kept keys
    assert np.allclose(moved.log_ratio,
                       sampler - lm.sequence_log_probs(base, MODEL, s.tokens, s.mask),
                       atol=1e-10)
    assert np.abs(moved.log_ratio).max() > 0.1


def test_the_kl_term_pulls_the_policy_back_toward_its_reference():
    """Rewards all equal (junk that strict never pays), β = 0.5: the shaped reward is
    -β log(π_θ / π_ref), so under rloo each completion's advantage is, in closed form, -β times
    its log-ratio's excess over the mean of its group's others: what the policy favours more
    than its reference is pushed down. Five such steps bring the policy back toward its
    reference: KL(π_θ ‖ π_ref), estimated on 256 fresh samples, falls (1.80 -> 0.97 nats
    here; with the term's sign flipped it rises to 2.79)."""
    pool, base, policy = tasks.train_problems(), params_of(0), params_of(1, spread=0.3)
    config = replace(FAST, beta=0.5, advantage="rloo")
    batch = tl.collect(policy, base, MODEL, pool, config, np.random.default_rng(6))
    ratio = batch.log_ratio.reshape(-1, config.group)
    others = (ratio.sum(axis=1, keepdims=True) - ratio) / (config.group - 1)
    assert np.allclose(batch.advantage.reshape(-1, config.group), -0.5 * (ratio - others))

    def kl(params: lm.Params) -> float:
        wide = replace(config, prompts=32, group=8)
        return float(tl.collect(params, base, MODEL, pool, wide,
                                np.random.default_rng(100)).log_ratio.mean())

    before, state, rng = kl(policy), lm.adam_init(policy), np.random.default_rng(0)
    for update in range(1, 6):
        batch = tl.collect(policy, base, MODEL, pool, config, rng)
        weights = tl.token_weights(batch.advantage, batch.mask, "rloo")
        policy, state, _ = tl.ascend(policy, state, MODEL, batch.tokens, weights, config,
                                     update)
    assert kl(policy) < 0.75 * before


@pytest.mark.parametrize("rule", ["rloo", "grpo", "dr_grpo"])
def test_equal_rewards_teach_nothing_unless_beta_is_positive(rule):
    pool, base, policy = tasks.train_problems(), params_of(0), params_of(1, spread=0.3)
    moved = {}
    for beta in (0.0, 0.5):
        config = replace(FAST, beta=beta, advantage=rule)
        batch = tl.collect(policy, base, MODEL, pool, config, np.random.default_rng(4))
        assert not batch.verdicts.reward.any()       # junk: strict pays nothing
        weights = tl.token_weights(batch.advantage, batch.mask, rule)
        after, _, _ = tl.ascend(policy, lm.adam_init(policy), MODEL, batch.tokens, weights,
                                config, 1)
        moved[beta] = not equal(after, policy)
    assert moved == {0.0: False, 0.5: True}


def test_a_first_step_with_equal_rewards_leaves_the_base_even_with_beta():
    config = replace(FAST, beta=1.0, steps=1)
    base = params_of(0)
    run = tl.train(config, MODEL, base, np.random.default_rng(5))
    assert run.logs[0].reward == 0.0 and run.logs[0].kl == 0.0 and equal(run.params, base)


# -- what is sampled for updates ------------------------------------------------------------------

def test_held_out_prompts_never_reach_an_update(monkeypatch):
    updated: list[str] = []
    policy_gradient = lm.policy_gradient

    def recording(params, config, tokens, weights, temperature=1.0):
        updated.extend(lm.decode(row) for row in tokens[:, :6])
        return policy_gradient(params, config, tokens, weights, temperature)

    monkeypatch.setattr(lm, "policy_gradient", recording)
    config = tl.TinyLearnConfig(steps=2, prompts=256, group=2, max_new=3)
    measure = tl.EvalConfig(prompts=4, samples=2)
    run = tl.train(config, MODEL, params_of(0), np.random.default_rng(6), (0, 2), measure)
    held_out = {p["prompt"] for p in tasks.held_out_problems()}
    # 512 draws: were held-out prompts (1 in 10) in the pool, some would be drawn
    assert len(updated) == 1024 and set(updated) <= {p["prompt"] for p in tasks.train_problems()}
    assert not held_out & set(updated)
    assert set(run.evaluations) == {0, 2} and run.evaluations[2]["held_out"].samples == 2


# -- determinism ----------------------------------------------------------------------------------

def test_a_run_is_a_function_of_its_seed_and_checkpoints_do_not_change_it(writer):
    config = replace(FAST, steps=3, reward="contains_format", beta=0.1, max_new=10)
    measure = tl.EvalConfig(prompts=2, samples=3)
    runs = [tl.train(config, MODEL, writer, np.random.default_rng(seed), checkpoints,
                     measure) for seed, checkpoints in ((7, ()), (7, (0, 1, 3)), (8, ()))]
    assert 0 < runs[0].logs[0].reward < 1 and not equal(runs[0].params, writer)
    assert runs[0].logs == runs[1].logs and equal(runs[0].params, runs[1].params)
    assert runs[0].logs != runs[2].logs and not equal(runs[0].params, runs[2].params)
    again = tl.train(config, MODEL, writer, np.random.default_rng(7), (0, 1, 3), measure)
    assert again.evaluations == runs[1].evaluations
    wider = tl.train(config, MODEL, writer, np.random.default_rng(7), (),
                     replace(measure, watch=5))                # another watch batch each step
    assert equal(wider.params, runs[0].params)
    assert [replace(log, held_out_pass_at_1=0.0) for log in wider.logs] == [
        replace(log, held_out_pass_at_1=0.0) for log in runs[0].logs]


def test_the_watch_scores_fresh_held_out_samples_of_the_policy_before_its_update(writer,
                                                                                  monkeypatch):
    def pays(example, text):               # a stand-in for strict that pays about half of junk
        return {"reward": float(sum(map(ord, text)) % 2 == 0)}

    monkeypatch.setattr(tl, "score", pays)
    config = replace(FAST, steps=2, reward="contains_format", max_new=10)
    measure = tl.EvalConfig(prompts=2, samples=3, watch=6)
    run = tl.train(config, MODEL, writer, np.random.default_rng(3), (), measure)
    rng = tl.watch_generator(config, measure)       # step 1's watch, drawn again by hand
    chosen = rng.choice(len(tasks.held_out_problems()), size=6, replace=False)
    problems = [tasks.held_out_problems()[i] for i in chosen for _ in range(config.group)]
    drawn = lm.sample(writer, MODEL, [p["prompt"] for p in problems], rng, 1.0, 10)
    paid = [pays(p, text)["reward"] for p, text in zip(problems, drawn.texts, strict=True)]
    assert run.logs[0].held_out_pass_at_1 == np.mean(paid) and 0 < np.mean(paid) < 1


# -- measuring ------------------------------------------------------------------------------------

@pytest.mark.parametrize("side_by_side", [tl.SIDE_BY_SIDE, 5])
def test_evaluate_against_a_recount(side_by_side, monkeypatch):
    def pays(example, text):               # a stand-in for strict that pays about half of junk
        return {"reward": float(sum(map(ord, text)) % 2 == 0)}

    monkeypatch.setattr(tl, "SIDE_BY_SIDE", side_by_side)
    monkeypatch.setattr(tl, "score", pays)
    params, n = params_of(2, spread=0.3), 8
    problems = tl.evaluation_problems("held_out", 3)
    measure = tl.evaluate(params, MODEL, problems, n, 1.0, 6, np.random.default_rng(9))
    rows = [p for p in problems for _ in range(n)]
    rng = np.random.default_rng(9)
    texts, lengths = [], []
    for i in range(0, len(rows), side_by_side):               # the same draws, in order
        drawn = lm.sample(params, MODEL, [p["prompt"] for p in rows[i:i + side_by_side]], rng,
                          1.0, 6)
        texts += drawn.texts
        lengths += drawn.lengths.tolist()
    correct = [sum(pays(p, t)["reward"] == 1.0
                   for p, t in zip(rows[i * n:(i + 1) * n], texts[i * n:(i + 1) * n],
                                   strict=True)) for i in range(len(problems))]
    assert list(measure.correct) == correct and 0 < sum(correct) < len(rows)
    assert measure.pass_at == pytest.approx(
        {k: np.mean([pass_at_k(n, c, k) for c in correct]) for k in (1, 2, 4, 8)})
    exploits = [tasks.label(p, t).kind == "exploit" for p, t in zip(rows, texts, strict=True)]
    assert measure.exploit_share == np.mean(exploits) and measure.length == np.mean(lengths)
    assert 0 < measure.entropy <= np.log(MODEL.vocab_size)


def test_evaluation_problems_are_fixed_and_spread_over_the_split():
    first = tl.evaluation_problems("train", 64)
    assert first == tl.evaluation_problems("train", 64) and len({p["id"] for p in first}) == 64
    assert first[0] == tasks.train_problems()[0] and first[-1] == tasks.train_problems()[-1]
    held_out = {p["prompt"] for p in tasks.held_out_problems()}
    assert all(p["prompt"] in held_out for p in tl.evaluation_problems("held_out", 64))


# -- settings -------------------------------------------------------------------------------------

@pytest.mark.parametrize("make, fields", [
    (lambda: tl.TinyLearnConfig(reward="nope", advantage="ppo", beta=-1, lr=0),
     ["reward", "advantage", "beta", "lr"]),
    (lambda: tl.TinyLearnConfig(group=1, steps=0, temperature=0.0, max_new=100, seed=-1),
     ["group", "steps", "temperature", "max_new", "seed"]),
    (lambda: tl.TinyLearnConfig(prompts=200, group=8), ["prompts x group"]),
    (lambda: tl.EvalConfig(prompts=0, samples=5_000, watch=0),
     ["prompts", "samples", "watch"]),
    (lambda: tl.train(replace(FAST, group=16), MODEL, params_of(0), np.random.default_rng(0),
                      (), tl.EvalConfig(watch=512)), ["watch"]),
    (lambda: tl.train(tl.TinyLearnConfig(max_new=12), MODEL, params_of(0),
                      np.random.default_rng(0)), ["max_new"]),
    (lambda: tl.train(replace(FAST, steps=2), MODEL, params_of(0),
                      np.random.default_rng(0), (0, 3)), ["checkpoints"]),
])
def test_settings_out_of_range_are_refused_on_one_line(make, fields):
    with pytest.raises(ValueError) as error:
        make()
    message = str(error.value)
    assert "\n" not in message and all(f"{field}: " in message for field in fields)
