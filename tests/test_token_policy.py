"""The token policy and its REINFORCE update, checked on instances small enough to enumerate.

With three pieces ("<eos>", "1", "2") and at most three steps there are 15 completions per
problem, so every expectation the code estimates by sampling has an exact value to compare with:

* sequence probabilities (Π_t π(y_t | s_t)) against the frequencies of many `sample` draws, and
  against a log-softmax written out by hand;
* the REINFORCE update ĝ = (1/B) Σ_i A_i ∇log π(y_i) against ∇J by enumeration, where
  J(θ) = Σ_x E_{y~π_θ}[r(x, y)] - β·KL(π_θ ‖ π_ref), itself checked by central finite
  differences of J; both exactly (every B-tuple of completions weighed by its probability) and
  as the mean of many sampled updates from `collect`;
* the two KL estimates of `collect` against the sequence-level KL summed over all completions;
* training by `reinforce_step` on a fully tabular learner against the closed-form optimum
  π*(y) ∝ π_ref(y)·exp(r(y)/β) of the KL-regularised objective;
* `Vocabulary.encode` against `render`, and `fit_reference` against counts done by hand.

A "fully tabular" feature gives every (problem, prefix) its own table row: `State.prefix` is a
bijective base-V numeral of the prefix (each step: prefix·V + y + 1), so it tells apart
prefixes of different lengths too, and such a policy can represent any distribution over the
15 completions.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from course.learn import (
    LearnConfig,
    collect,
    gradient,
    leave_one_out_baseline,
    reinforce_step,
)
from course.token_policy import (
    EOS,
    RUN_MAX,
    T_MAX,
    Policy,
    Rollouts,
    State,
    Vocabulary,
    all_sequences,
    by_previous_piece,
    by_problem_and_run,
    by_problem_previous_and_run,
    entropy_of,
    exact_distribution,
    fit_reference,
    learner_for,
    rollouts_of,
    sample,
    sequence_log_prob,
    step_states,
    token_log_probs,
)

# -- the tiny instance ----------------------------------------------------------------------------

TINY = Vocabulary((EOS, "1", "2"))
V, T, P = TINY.size, 3, 2                      # pieces, steps, problems
ROWS = sum(V**k for k in range(T)) + 1         # prefixes written before the last step: 0..12
SEQUENCES = all_sequences(TINY, T)             # 1 + 2 + 4 ended, 8 cut at T: 15 in all
INDEX = {seq: i for i, seq in enumerate(SEQUENCES)}

PROBLEMS = [{"id": "one", "prompt": "say 1", "expected_answer": 1},
            {"id": "twenty-one", "prompt": "say 21", "expected_answer": 21}]
"""With the `answer_anywhere` rubric, r(x, y) = 1 iff str(expected) occurs in the text."""


def tabular(state: State) -> np.ndarray:
    """Row = (problem mod P, whole prefix): one row per context, so any distribution fits.
    (Mod P lets a batch list the same P problems many times over, as distinct prompts.)"""
    return (state.x % P) * ROWS + state.prefix


def hand_reward(x: int, seq: tuple[int, ...]) -> float:
    """`answer_anywhere` for PROBLEMS, written out: does the expected number occur in the text?"""
    return float(str(PROBLEMS[x]["expected_answer"]) in TINY.render(seq))


def make_reference(rng: np.random.Generator) -> Policy:
    """A random, fully tabular reference policy (no base)."""
    return Policy(TINY, (tabular,), [rng.normal(0, 1.0, (P * ROWS, V))], t_max=T)


def make_learner(reference: Policy, rng: np.random.Generator) -> Policy:
    """A learner on top of `reference`: a tabular table plus one shared by every problem (so
    one row collects gradient from many contexts), both random."""
    tables = [rng.normal(0, 0.7, (P * ROWS, V)), rng.normal(0, 0.7, (V + 1, V))]
    return Policy(TINY, (tabular, by_previous_piece), tables, reference, T)


def with_tables(policy: Policy, tables: list[np.ndarray]) -> Policy:
    return Policy(policy.vocab, policy.features, tables, policy.base, policy.t_max)


def probs_of(policy: Policy) -> np.ndarray:
    """(P, 15) π(y | x) by enumeration, rows in the order of SEQUENCES."""
    return np.array([exact_distribution(policy, x)[1] for x in range(P)])


def indices_of(rollouts: Rollouts) -> np.ndarray:
    """The position in SEQUENCES of each sampled completion."""
    return np.array([INDEX[tuple(row[row >= 0].tolist())] for row in rollouts.ids])


def objective(learner: Policy, rewards: np.ndarray, beta: float) -> float:
    """J(θ) = Σ_x Σ_y π(y|x) [r(x, y) - β log(π(y|x) / π_ref(y|x))], by enumeration."""
    pi, ref = probs_of(learner), probs_of(learner.base)
    return float((pi * (rewards - beta * np.log(pi / ref))).sum())


def score_functions(learner: Policy, x: int) -> list[list[np.ndarray]]:
    """∇_θ log π(y | x) for every y in SEQUENCES, one array per table, stepping by hand: each
    step adds onehot(y_t) - π(· | s_t) to the row each feature reads (log-linear softmax)."""
    out = []
    for seq in SEQUENCES:
        grads = [np.zeros_like(w) for w in learner.tables]
        state = State.start(np.array([x]))
        for y in seq:
            step = np.eye(V)[y] - np.exp(learner.log_probs(state))[0]
            for g, feature in zip(grads, learner.features, strict=True):
                g[feature(state)[0]] += step
            state = state.after(np.array([y]), TINY)
        out.append(grads)
    return out


def exact_gradient(learner: Policy, rewards: np.ndarray, beta: float) -> list[np.ndarray]:
    """∇J = Σ_x Σ_y π(y|x) (r(x, y) - β log(π(y|x)/π_ref(y|x))) ∇log π(y|x)."""
    pi, ref = probs_of(learner), probs_of(learner.base)
    shaped = rewards - beta * np.log(pi / ref)
    total = [np.zeros_like(w) for w in learner.tables]
    for x in range(P):
        for y, grads in enumerate(score_functions(learner, x)):
            for acc, g in zip(total, grads, strict=True):
                acc += pi[x, y] * shaped[x, y] * g
    return total


def flat(arrays: list[np.ndarray]) -> np.ndarray:
    return np.concatenate([a.ravel() for a in arrays])


HAND_REWARDS = np.array([[hand_reward(x, seq) for seq in SEQUENCES] for x in range(P)])


# -- the instance itself --------------------------------------------------------------------------

def test_tabular_feature_gives_every_prefix_its_own_row():
    rows = set()
    for x in range(P):
        for t in range(T):
            for head in itertools.product(range(V), repeat=t):
                state = State.start(np.array([x]))
                for y in head:
                    state = state.after(np.array([y]), TINY)
                rows.add(int(tabular(state)[0]))
    assert len(rows) == P * sum(V**t for t in range(T))        # injective on (x, prefix)
    assert max(rows) < P * ROWS                                 # and inside the table
    assert len(SEQUENCES) == 1 + 2 + 4 + 8                      # ended at t = 0..2, or cut


def test_log_probs_are_the_log_softmax_of_base_plus_table_rows():
    rng = np.random.default_rng(1)
    reference = make_reference(rng)
    learner = make_learner(reference, rng)
    state = State(np.array([0, 1, 1]), np.array([-1, 0, 2]), np.zeros(3, int),
                  np.array([0, 3, 9]), 1)
    # by hand: logits = ref_table[row] (log-softmaxed) + W0[row] + W1[prev + 1]
    z_ref = reference.tables[0][tabular(state)]
    log_ref = z_ref - np.log(np.exp(z_ref).sum(axis=1, keepdims=True))
    z = log_ref + learner.tables[0][tabular(state)] + learner.tables[1][state.prev + 1]
    expected = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    np.testing.assert_allclose(reference.log_probs(state), log_ref, atol=1e-12)
    np.testing.assert_allclose(learner.log_probs(state), expected, atol=1e-12)
    # a -inf logit is a piece that cannot be written, not a NaN
    blocked = Policy(TINY, (by_previous_piece,), [np.array([[0.0, -np.inf, 0.0]] * (V + 1))])
    np.testing.assert_allclose(np.exp(blocked.log_probs(State.start(np.array([0])))),
                               [[0.5, 0.0, 0.5]])


# -- 1. sequence probabilities: a distribution, and the one `sample` draws from -------------------

@pytest.mark.parametrize("which", ["reference", "learner"])
def test_sequence_probabilities_match_sample_frequencies(which):
    rng = np.random.default_rng(2)
    reference = make_reference(rng)
    policy = reference if which == "reference" else make_learner(reference, rng)
    n = 100_000
    for x in range(P):
        sequences, probs = exact_distribution(policy, x)
        assert sequences == SEQUENCES
        assert (probs >= 0).all()
        assert probs.sum() == pytest.approx(1.0, abs=1e-12)
        rollouts = sample(policy, np.full(n, x), rng)
        freq = np.bincount(indices_of(rollouts), minlength=len(SEQUENCES)) / n
        # a binomial frequency: |f - p| ≤ 5 σ, σ = √(p(1-p)/n), plus one count of slack
        bound = 5 * np.sqrt(probs * (1 - probs) / n) + 1 / n
        assert (np.abs(freq - probs) <= bound).all(), np.abs(freq - probs) / bound


def test_samples_are_padded_after_eos_and_rendered_up_to_it():
    rng = np.random.default_rng(3)
    policy = make_learner(make_reference(rng), rng)
    rollouts = sample(policy, np.repeat(np.arange(P), 500), rng)
    for row, text, n in zip(rollouts.ids, rollouts.texts, rollouts.lengths, strict=True):
        body = row[:n]
        assert (row[n:] == -1).all() and (body >= 0).all()
        assert (body[:-1] != 0).all()                      # <eos> only ever last
        assert body[-1] == 0 or n == T                     # ended, or cut at T
        assert text == "".join(TINY.pieces[i] for i in body if i != 0)


# -- 2. log-probabilities of sampled completions --------------------------------------------------

def test_log_probs_of_samples_equal_enumerated_log_probs():
    rng = np.random.default_rng(4)
    policy = make_learner(make_reference(rng), rng)
    exact = np.log(probs_of(policy))
    rollouts = sample(policy, np.repeat(np.arange(P), 1000), rng)
    idx = indices_of(rollouts)
    np.testing.assert_allclose(sequence_log_prob(policy, rollouts), exact[rollouts.x, idx],
                               atol=1e-12)
    # token by token: log π(y_t | s_t) from one state at a time, 0 after the end
    per_token = token_log_probs(policy, rollouts)
    for i in range(0, len(idx), 97):
        state, expected = State.start(rollouts.x[[i]]), np.zeros(T)
        for t, y in enumerate(SEQUENCES[idx[i]]):
            expected[t] = policy.log_probs(state)[0, y]
            state = state.after(np.array([y]), TINY)
        np.testing.assert_allclose(per_token[i], expected, atol=1e-12)


# -- 3. the REINFORCE update is an unbiased estimate of ∇J ----------------------------------------

BETAS = [0.0, 0.4]


@pytest.mark.parametrize("beta", BETAS)
def test_exact_gradient_matches_finite_differences_of_j(beta):
    rng = np.random.default_rng(5)
    learner = make_learner(make_reference(rng), rng)
    rewards = rng.uniform(0, 1, (P, len(SEQUENCES)))
    analytic = flat(exact_gradient(learner, rewards, beta))
    h, numeric = 1e-5, []
    for j, table in enumerate(learner.tables):
        for k in range(table.size):
            plus = [w.copy() for w in learner.tables]
            minus = [w.copy() for w in learner.tables]
            plus[j].flat[k] += h
            minus[j].flat[k] -= h
            # central difference: (J(θ + h e_k) - J(θ - h e_k)) / 2h
            numeric.append((objective(with_tables(learner, plus), rewards, beta)
                            - objective(with_tables(learner, minus), rewards, beta)) / (2 * h))
    assert np.abs(analytic).max() > 0.01                   # not a vacuous comparison
    np.testing.assert_allclose(analytic, numeric, atol=1e-8)


def all_batches(x: int, batch_size: int) -> tuple[Rollouts, np.ndarray]:
    """Every B-tuple of completions for problem x as one Rollouts (B rows per tuple), and the
    index of each row's completion."""
    tuples = list(itertools.product(range(len(SEQUENCES)), repeat=batch_size))
    idx = np.array(tuples).reshape(-1)
    return rollouts_of([SEQUENCES[i] for i in idx], x, T), idx


def expected_update(learner: Policy, rewards: np.ndarray, beta: float, batch_size: int,
                    include_own: bool) -> np.ndarray:
    """E[ĝ] exactly: Σ over every B-tuple per problem of Π_b π(y_b) · ĝ(tuple). ĝ is linear in
    the advantages, so the tuple's weight multiplies its advantages."""
    pi, ref = probs_of(learner), probs_of(learner.base)
    total = np.zeros(sum(w.size for w in learner.tables))
    for x in range(P):
        rollouts, idx = all_batches(x, batch_size)
        shaped = rewards[x, idx] - beta * np.log(pi[x, idx] / ref[x, idx])
        if include_own:
            baseline = np.repeat(shaped.reshape(-1, batch_size).mean(axis=1), batch_size)
        else:
            baseline = leave_one_out_baseline(shaped, batch_size)
        weight = np.repeat(pi[x, idx].reshape(-1, batch_size).prod(axis=1), batch_size)
        total += flat(gradient(learner, rollouts, weight * (shaped - baseline), batch_size))
    return total


@pytest.mark.parametrize("beta", BETAS)
def test_leave_one_out_update_is_unbiased_and_own_mean_shrinks_it(beta):
    rng = np.random.default_rng(6)
    learner = make_learner(make_reference(rng), rng)
    rewards = rng.uniform(0, 1, (P, len(SEQUENCES)))
    b = 3
    grad_j = flat(exact_gradient(learner, rewards, beta))
    loo = expected_update(learner, rewards, beta, b, include_own=False)
    own = expected_update(learner, rewards, beta, b, include_own=True)
    np.testing.assert_allclose(loo, grad_j, atol=1e-12)                   # E[ĝ] = ∇J
    np.testing.assert_allclose(own, (1 - 1 / b) * grad_j, atol=1e-12)     # E[ĝ] = (1 - 1/B) ∇J
    assert np.abs(grad_j).max() > 0.01


def test_leave_one_out_baseline_is_the_mean_of_the_others():
    values = np.array([1.0, 2.0, 6.0, -1.0, 0.0, 4.0])
    np.testing.assert_allclose(leave_one_out_baseline(values, 3),
                               [4.0, 3.5, 1.5, 2.0, 1.5, -0.5])


def many_updates(learner: Policy, beta: float, batch_size: int, copies: int,
                 rng: np.random.Generator):
    """One `collect` over `copies` × P prompts (the P problems listed `copies` times): B fresh
    samples each, as `copies` independent batches of the real update, side by side."""
    config = LearnConfig(reward="answer_anywhere", beta=beta, batch_size=batch_size)
    return collect(learner, PROBLEMS * copies, config, rng)


@pytest.mark.parametrize("beta", BETAS)
def test_mean_of_sampled_updates_matches_exact_gradient(beta):
    rng = np.random.default_rng(7)
    learner = make_learner(make_reference(rng), rng)
    b, copies, chunks = 4, 12_000, 50
    update = many_updates(learner, beta, b, copies, rng)
    # the rewards collect paid are the rubric's, and the shaped R uses its own log-ratio
    pi, ref = probs_of(learner), probs_of(learner.base)
    x, idx = update.rollouts.x % P, indices_of(update.rollouts)
    np.testing.assert_array_equal(update.reward, HAND_REWARDS[x, idx])
    np.testing.assert_allclose(update.log_ratio, np.log(pi[x, idx] / ref[x, idx]), atol=1e-12)
    shaped = update.reward - beta * update.log_ratio
    np.testing.assert_allclose(update.advantage,
                               shaped - leave_one_out_baseline(shaped, b), atol=1e-12)
    # the mean over `copies` batches, in `chunks` groups to measure its standard error
    size = len(x) // chunks
    estimates = np.array([
        flat(gradient(learner, Rollouts(update.rollouts.x[k * size:(k + 1) * size],
                                        update.rollouts.ids[k * size:(k + 1) * size]),
                      update.advantage[k * size:(k + 1) * size], b)) / (copies / chunks)
        for k in range(chunks)])
    mean = estimates.mean(axis=0)
    # ‖se‖ = √(Σ_k se_k²) is the expected size of the error vector of an unbiased mean; it is
    # compared as a whole (a rarely visited row has a poorly estimated se of its own)
    noise = np.linalg.norm(estimates.std(axis=0, ddof=1)) / np.sqrt(chunks)
    grad_j = flat(exact_gradient(learner, HAND_REWARDS, beta))
    assert np.abs(mean - grad_j).max() < 0.01
    assert np.linalg.norm(mean - grad_j) < 3 * noise
    # the per-prompt mean that includes R_i: A = (1 - 1/B)(R_i - b_i) for every sample, so the
    # same batches average to (1 - 1/B) ∇J, a step that is measurably too short
    own = shaped - np.repeat(shaped.reshape(-1, b).mean(axis=1), b)
    np.testing.assert_allclose(own, (1 - 1 / b) * update.advantage, atol=1e-12)
    shrunk = (1 - 1 / b) * mean
    assert np.linalg.norm(shrunk - (1 - 1 / b) * grad_j) < 3 * noise
    assert np.linalg.norm(shrunk - grad_j) > 6 * noise


# -- 4. the KL estimates of `collect` -------------------------------------------------------------

def exact_kl(learner: Policy) -> np.ndarray:
    """(P,) KL(π_θ(·|x) ‖ π_ref(·|x)) = Σ_y π(y|x) log(π(y|x) / π_ref(y|x)) by enumeration."""
    pi, ref = probs_of(learner), probs_of(learner.base)
    return (pi * np.log(pi / ref)).sum(axis=1)


def test_per_step_kl_sums_to_sequence_kl_exactly():
    # chain rule: Σ_y π(y) Σ_t KL(π(·|s_t) ‖ π_ref(·|s_t)) over y's own steps = KL over sequences
    rng = np.random.default_rng(8)
    learner = make_learner(make_reference(rng), rng)
    pi = probs_of(learner)
    for x in range(P):
        rollouts = rollouts_of(SEQUENCES, x, T)
        per_sequence = np.zeros(len(SEQUENCES))
        for state, y in step_states(learner, rollouts):
            logp, logq = learner.log_probs(state), learner.base.log_probs(state)
            per_sequence += np.where(y >= 0, (np.exp(logp) * (logp - logq)).sum(axis=1), 0.0)
        assert pi[x] @ per_sequence == pytest.approx(exact_kl(learner)[x], abs=1e-12)


def test_kl_estimates_of_collect_match_exact_kl():
    rng = np.random.default_rng(9)
    learner = make_learner(make_reference(rng), rng)
    update = many_updates(learner, 0.1, 2, 20_000, rng)
    x = update.rollouts.x % P
    kl = exact_kl(learner)
    assert kl.min() > 0.05
    for prompt in range(P):
        mine = x == prompt
        for estimate in (update.log_ratio[mine], update.kl_steps[mine]):
            se = estimate.std(ddof=1) / np.sqrt(mine.sum())
            assert abs(estimate.mean() - kl[prompt]) <= 5 * se
        # and -log π(y) averages to the sequence entropy
        entropy = update.entropy[mine]
        h = entropy_of(probs_of(learner)[prompt])
        assert abs(entropy.mean() - h) <= 5 * entropy.std(ddof=1) / np.sqrt(mine.sum())
    # the per-step sum is the lower-variance estimate of the two
    assert update.kl_steps.std() < update.log_ratio.std()


# -- 5. training reaches the KL-regularised optimum -----------------------------------------------

def optimum(reference: Policy, beta: float) -> np.ndarray:
    """π*(y|x) = π_ref(y|x) exp(r(x, y)/β) / Z(x): the maximiser of E[r] - β KL(π ‖ π_ref)."""
    tilted = probs_of(reference) * np.exp(HAND_REWARDS / beta)
    return tilted / tilted.sum(axis=1, keepdims=True)


def j_of(pi: np.ndarray, ref: np.ndarray, beta: float) -> np.ndarray:
    """(P,) E_π[r] - β KL(π ‖ π_ref) for distributions given as arrays (0 log 0 = 0)."""
    log_ratio = np.log(np.where(pi > 0, pi, 1.0) / ref)
    return (pi * (HAND_REWARDS - beta * log_ratio)).sum(axis=1)


def test_training_approaches_the_closed_form_optimum():
    rng = np.random.default_rng(10)
    beta = 0.5
    reference = make_reference(rng)
    learner = Policy(TINY, (tabular,), [np.zeros((P * ROWS, V))], reference, T)
    target = optimum(reference, beta)
    start_tv = 0.5 * np.abs(probs_of(learner) - target).sum(axis=1)
    for lr, steps in [(1.0, 300), (0.3, 300)]:
        config = LearnConfig(reward="answer_anywhere", beta=beta, lr=lr, batch_size=32)
        for _ in range(steps):
            reinforce_step(learner, PROBLEMS, config, rng)
    learned = probs_of(learner)
    tv = 0.5 * np.abs(learned - target).sum(axis=1)
    assert start_tv.min() > 0.2
    assert tv.max() < 0.02, tv
    # the optimum's value is β log Z, and nothing enumerated beats it
    ref = probs_of(reference)
    best = j_of(target, ref, beta)
    np.testing.assert_allclose(best, beta * np.log((ref * np.exp(HAND_REWARDS / beta))
                                                   .sum(axis=1)), atol=1e-12)
    assert (best >= j_of(learned, ref, beta)).all()
    assert (best >= j_of(ref, ref, beta)).all()
    others = rng.dirichlet(np.ones(len(SEQUENCES)), size=(200, P))
    mixtures = [0.9 * target + 0.1 * o for o in others]
    for alternative in [*others, *mixtures]:
        assert (best >= j_of(alternative, ref, beta)).all()


# -- 6. the vocabulary and the reference ----------------------------------------------------------

@pytest.mark.parametrize("vocab", [TINY, Vocabulary()], ids=["tiny", "default"])
def test_encode_inverts_render_for_every_ended_sequence(vocab):
    for seq in all_sequences(vocab, 3 if vocab is TINY else 4):
        if seq[-1] == 0:
            assert vocab.encode(vocab.render(seq)) == list(seq)


@pytest.mark.parametrize("text", ["x", "Final: +3", "Final:\u00a03", "2 = 2", "Final: ３"])
def test_encode_refuses_a_character_no_piece_has(text):
    assert Vocabulary().encode(text) is None


def test_encode_is_greedy_longest_match():
    assert Vocabulary().encode("The answer is 3 or 4") == [
        Vocabulary().pieces.index(p) for p in ("The answer is", " ", "3", " or", " ", "4")] + [0]
    assert Vocabulary().encode("") == [0]


SPELL = Vocabulary((EOS, "Final", ":", " ", "1", "2"))


def test_fit_reference_counts_by_hand():
    examples = [(0, "Final: 12"), (0, "Final: 1"), (1, "Final: 2"),
                (1, "Final: 3"),                  # "3" is in no piece: skipped
                (1, "1" * T_MAX)]                 # 12 digits + <eos> > T_MAX pieces: skipped
    reference, report = fit_reference(SPELL, examples, 2, own_weight=0.9, smoothing=0.02)
    assert report == {"used": 3, "skipped": ["Final: 3", "1" * T_MAX]}
    s, v = 0.02, SPELL.size
    final, colon, one, two = 1, 2, 4, 5

    def probs(x: int, prev: int, run: int) -> np.ndarray:
        state = State(np.array([x]), np.array([prev]), np.array([run]), np.array([0]))
        return np.exp(reference.log_probs(state))[0]

    # after "Final" (run 0): all 3 used completions wrote ":"; problem 0's own two did too
    pooled_colon = (3 + s) / (3 + v * s)
    expected = np.full(v, 0.1 * s / (3 + v * s))
    expected[colon] = 0.9 * 1.0 + 0.1 * pooled_colon
    np.testing.assert_allclose(probs(0, final, 0), expected, rtol=1e-12)
    # after the first digit "1" (run 1): problem 0 wrote "2" once and <eos> once; problem 1
    # never passed here, so it gets the pooled counts alone (the skipped twelve "1"s, had they
    # been counted, would have added a "1" here)
    pooled = np.full(v, s / (2 + v * s))
    pooled[[two, 0]] = (1 + s) / (2 + v * s)
    own = np.zeros(v)
    own[[two, 0]] = 0.5
    np.testing.assert_allclose(probs(0, one, 1), 0.9 * own + 0.1 * pooled, rtol=1e-12)
    np.testing.assert_allclose(probs(1, one, 1), pooled, rtol=1e-12)
    # a context no example reached: uniform smoothing
    np.testing.assert_allclose(probs(1, two, 0), np.full(v, 1 / v), rtol=1e-12)
    # the run is part of the context: after "1" as a second digit in a row, nothing was seen
    np.testing.assert_allclose(probs(0, one, 2), np.full(v, 1 / v), rtol=1e-12)


def test_learner_starts_exactly_at_the_reference():
    rng = np.random.default_rng(11)
    examples = [(0, "Final: 12"), (0, "Final: 1"), (1, "Final: 2"), (1, "11: 2 21")]
    reference, _ = fit_reference(SPELL, examples, 2)
    learner = learner_for(reference, 2)
    assert [w.shape for w in learner.tables] == [(SPELL.size + 1, SPELL.size),
                                                 (2 * (RUN_MAX + 1), SPELL.size)]
    assert all((w == 0).all() for w in learner.tables) and learner.base is reference
    rollouts = sample(learner, np.repeat(np.arange(2), 200), rng)
    states = step_states(learner, rollouts)
    assert len(states) == T_MAX                       # some completion ran to the cut
    for state, _ in states:
        np.testing.assert_array_equal(learner.log_probs(state), reference.log_probs(state))
    np.testing.assert_array_equal(sequence_log_prob(learner, rollouts),
                                  sequence_log_prob(reference, rollouts))


def test_a_learner_with_shared_rows_stops_at_a_projection_of_the_optimum():
    # π* ∝ π_ref e^{r/β} needs a row per context. A learner whose only table is shared by both
    # problems (the previous piece) cannot express it: gradient ascent still converges, to the
    # best policy those rows can express: a stationary point of J that is not π* and earns less.
    rng = np.random.default_rng(11)
    beta = 0.5
    reference = make_reference(rng)
    learner = Policy(TINY, (by_previous_piece,), [np.zeros((V + 1, V))], reference, T)
    for _ in range(400):
        learner.tables[0] += 0.5 * exact_gradient(learner, HAND_REWARDS, beta)[0]
    assert np.abs(flat(exact_gradient(learner, HAND_REWARDS, beta))).max() < 1e-6
    ref, target, learned = probs_of(reference), optimum(reference, beta), probs_of(learner)
    tv = 0.5 * np.abs(learned - target).sum(axis=1)
    assert tv.max() > 0.05
    assert j_of(ref, ref, beta).sum() < j_of(learned, ref, beta).sum() < j_of(target, ref,
                                                                               beta).sum() - 0.01


def test_a_long_run_of_digits_stays_in_its_own_problems_rows():
    """The digit run is clamped at RUN_MAX: however many digits a completion writes in a row,
    each choice reads a row of its own problem. (Clamped at RUN_MAX + 1, the ninth digit of
    problem 0 would read problem 1's first row: a mutation no other test caught.)"""
    vocab = Vocabulary()
    digit = vocab.pieces.index("7")
    rows_per_problem = (vocab.size + 1) * (RUN_MAX + 1)
    previous_and_run = by_problem_previous_and_run(vocab.size)
    state = State.start(np.array([0, 1]))
    for _ in range(RUN_MAX + 4):
        state = state.after(np.array([digit, digit]), vocab)
        assert state.run.tolist() == [min(state.t, RUN_MAX)] * 2
        assert by_problem_and_run(state).tolist() == [state.run[0], RUN_MAX + 1 + state.run[1]]
        rows = previous_and_run(state)
        assert (rows // rows_per_problem).tolist() == [0, 1]
