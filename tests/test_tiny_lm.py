"""The numpy transformer of `course.tiny_lm`, checked against independent references.

* The forward pass against a second, naive implementation written with loops over sequences,
  positions and heads (no batched matrix products, no mask: each position sums over the
  positions before it).
* Every parameter's gradient, for both losses (next-character cross-entropy with a mask, and
  the policy-gradient loss at a temperature τ ≠ 1), against central finite differences of the
  loss, on a small float64 instance (2 layers, width 8, 2 heads, 2 sequences of 5 tokens).
* Sampling, on a vocabulary of 3 symbols and the end token with at most 3 new tokens (40
  completions per prompt): the probabilities of all completions sum to 1; the sampler's
  frequencies match them (chi-square); the log-probabilities and entropies the sampler returns
  are those the scoring functions compute; at τ = 1 and at τ = 0.6. The policy-gradient loss's
  gradient, weighted by π(y)·R(y) over every completion, is the gradient of E[R].
* Causality: a sequence's token log-probabilities equal those computed one prefix at a time,
  and changing a later token leaves the earlier logits as they were; reading on from cached
  keys and values (as `sample` does) gives the logits of a pass over the whole sequence.
* Padding: a batch of texts of different lengths scores each text as it scores alone.
* Adam against a step computed by hand on a one-parameter problem; clipping.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from course.tiny_lm import (
    EOT_ID,
    VOCAB,
    AdamConfig,
    AdamState,
    ModelConfig,
    Params,
    adam_init,
    adam_step,
    backward,
    count_params,
    decode,
    encode,
    encode_prompts,
    forward,
    init_params,
    language_model_loss,
    policy_gradient,
    sample,
    sequence_log_probs,
    text_batch,
    token_entropies,
    token_log_probs,
    weighted_nll,
)

SMALL = ModelConfig(vocab_size=7, block_size=8, n_layer=2, n_embd=8, n_head=2)
MICRO = ModelConfig(vocab_size=4, block_size=6, n_layer=2, n_embd=8, n_head=2)


def random_params(config: ModelConfig, seed: int, scale: float = 0.5) -> Params:
    """Parameters far from initialisation (every weight ~ N(0, scale²), gains ~ 1 + N(0,
    scale²)), so that the attention, layer norms and GELU all work away from their linear
    regime and the output distributions are far from uniform."""
    rng = np.random.default_rng(seed)
    return {name: rng.normal(0.0, scale, array.shape) + name.endswith(".g")
            for name, array in init_params(config, rng).items()}


# -- the vocabulary and the parameters ------------------------------------------------------------

def test_encode_decode_round_trip_and_refuse_unknown_characters():
    text = "12+34=Final: 46\nfinal:\xa0-7. Answer: The answer is **3**, 4"
    ids = encode(text, end=True)
    assert ids[-1] == EOT_ID and decode(ids) == text
    assert decode([*encode("Final: 4").tolist(), EOT_ID, *encode("junk").tolist()]) == "Final: 4"
    assert len(VOCAB) == len(set(VOCAB)) == 50 and VOCAB[EOT_ID] == "<eot>"
    with pytest.raises(ValueError, match="outside the vocabulary"):
        encode("Final: 4€")
    with pytest.raises(ValueError, match="one length"):
        encode_prompts(["1+2=", "12+34="])


def test_init_is_gpt2_style_and_the_count_matches_the_architecture():
    config = ModelConfig()
    params = init_params(config, np.random.default_rng(0))
    c, v, t, n = config.n_embd, config.vocab_size, config.block_size, config.n_layer
    per_block = 2 * c + (c * 3 * c + 3 * c) + (c * c + c) + 2 * c + (c * 4 * c + 4 * c) + (
        4 * c * c + c)
    assert count_params(params) == v * c + t * c + n * per_block + 2 * c + c * v == 108_544
    assert abs(params["h0.attn.w_qkv"].std() - 0.02) < 0.001
    assert abs(params["h1.mlp.w_proj"].std() - 0.02 / math.sqrt(2 * n)) < 0.001
    assert (params["h1.ln2.g"] == 1).all() and (params["h0.mlp.b_fc"] == 0).all()
    assert all(a.dtype == np.float64 for a in params.values())
    again = init_params(config, np.random.default_rng(0))
    assert all((again[k] == a).all() for k, a in params.items())


# -- the forward pass against a naive one ---------------------------------------------------------

def naive_logits(params: Params, config: ModelConfig, tokens: np.ndarray) -> np.ndarray:
    """The same transformer, written with loops: one sequence, one position, one head at a
    time, each query reading the keys of positions 0..t only."""
    c, h = config.n_embd, config.n_head
    d = c // h

    def norm(x, g, b):
        return g * (x - x.mean()) / math.sqrt(x.var() + 1e-5) + b

    def gelu(x):
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))

    out = np.zeros((*tokens.shape, config.vocab_size))
    for b, row in enumerate(tokens):
        xs = [params["wte"][tok] + params["wpe"][t] for t, tok in enumerate(row)]
        for layer in range(config.n_layer):
            p = f"h{layer}."
            qkv = [norm(x, params[p + "ln1.g"], params[p + "ln1.b"]) @ params[p + "attn.w_qkv"]
                   + params[p + "attn.b_qkv"] for x in xs]
            new = []
            for t, x in enumerate(xs):
                heads = []
                for head in range(h):
                    q = qkv[t][head * d:(head + 1) * d]
                    keys = [qkv[s][c + head * d:c + (head + 1) * d] for s in range(t + 1)]
                    values = [qkv[s][2 * c + head * d:2 * c + (head + 1) * d]
                              for s in range(t + 1)]
                    e = np.array([math.exp(q @ k / math.sqrt(d)) for k in keys])
                    heads.append(sum(w * val for w, val in zip(e / e.sum(), values,
                                                               strict=True)))
                x = x + np.concatenate(heads) @ params[p + "attn.w_proj"] + params[
                    p + "attn.b_proj"]
                m = norm(x, params[p + "ln2.g"], params[p + "ln2.b"])
                hidden = gelu(m @ params[p + "mlp.w_fc"] + params[p + "mlp.b_fc"])
                new.append(x + hidden @ params[p + "mlp.w_proj"] + params[p + "mlp.b_proj"])
            xs = new
        for t, x in enumerate(xs):
            out[b, t] = norm(x, params["ln_f.g"], params["ln_f.b"]) @ params["w_out"]
    return out


def test_forward_matches_a_naive_implementation():
    params = random_params(SMALL, 1, scale=0.3)
    tokens = np.random.default_rng(2).integers(0, SMALL.vocab_size, (2, 6))
    logits, _ = forward(params, SMALL, tokens)
    assert logits.shape == (2, 6, SMALL.vocab_size)
    assert np.allclose(logits, naive_logits(params, SMALL, tokens), rtol=0, atol=1e-12)


def test_float32_follows_float64():
    config32 = ModelConfig(vocab_size=7, block_size=8, n_layer=2, n_embd=8, n_head=2,
                           dtype="float32")
    params = random_params(SMALL, 1, scale=0.3)
    tokens = np.random.default_rng(2).integers(0, 7, (2, 6))
    logits64, _ = forward(params, SMALL, tokens)
    logits32, _ = forward({k: a.astype(np.float32) for k, a in params.items()}, config32,
                          tokens)
    assert logits32.dtype == np.float32
    assert np.allclose(logits32, logits64, atol=1e-5)
    assert init_params(config32, np.random.default_rng(0))["wte"].dtype == np.float32


# -- the losses, and every gradient against finite differences -----------------------------------

def hand_log_probs(logits: np.ndarray, temperature: float) -> np.ndarray:
    z = logits / temperature
    return np.log(np.exp(z) / np.exp(z).sum(axis=-1, keepdims=True))


def loss_only(params: Params, tokens: np.ndarray, weights: np.ndarray, temperature: float,
              ) -> float:
    """-Σ_{b,j} w[b,j] log π_τ(tokens[b,j] | tokens[b,:j]) by the forward pass alone."""
    logits, _ = forward(params, SMALL, tokens[:, :-1])
    picked = np.take_along_axis(hand_log_probs(logits, temperature),
                                tokens[:, 1:, None], axis=-1)[..., 0]
    return -float((weights[:, 1:] * picked).sum())


def worst_relative_error(params: Params, grads: Params, loss, h: float = 1e-5) -> float:
    """max over keys of ‖g - ĝ‖ / (‖g‖ + ‖ĝ‖), ĝ by central differences of every entry:
    ĝ_i = (L(θ + h e_i) - L(θ - h e_i)) / 2h."""
    worst = 0.0
    for name, array in params.items():
        numeric = np.zeros_like(array)
        for index in np.ndindex(array.shape):
            keep = array[index]
            array[index] = keep + h
            up = loss(params)
            array[index] = keep - h
            down = loss(params)
            array[index] = keep
            numeric[index] = (up - down) / (2 * h)
        error = np.linalg.norm(grads[name] - numeric)
        worst = max(worst, error / max(np.linalg.norm(grads[name]) + np.linalg.norm(numeric),
                                       1e-300))
    return worst


def gradient_instance():
    """2 sequences of 5 tokens (one ends early and is padded), a mask and per-token weights."""
    params = random_params(SMALL, 3)
    tokens = np.array([[1, 5, 2, 6, 3], [4, 4, 1, EOT_ID, EOT_ID]])
    mask = np.array([[0, 1, 1, 0, 1], [0, 0, 1, 1, 0]], dtype=bool)
    weights = np.array([[0, 0.7, 0.7, 0, -1.3], [0, 0, 2.0, 0.5, 0]])
    return params, tokens, mask, weights


def test_cross_entropy_value_and_every_gradient_against_finite_differences():
    params, tokens, mask, _ = gradient_instance()
    loss, grads = language_model_loss(params, SMALL, tokens, mask)
    assert grads.keys() == params.keys()
    assert all(grads[k].shape == a.shape for k, a in params.items())
    assert loss == pytest.approx(loss_only(params, tokens, mask / mask.sum(), 1.0), rel=1e-12)
    worst = worst_relative_error(params, grads,
                                 lambda p: loss_only(p, tokens, mask / mask.sum(), 1.0))
    assert worst < 1e-6


def test_policy_gradient_value_and_every_gradient_against_finite_differences():
    params, tokens, _, weights = gradient_instance()
    loss, grads = policy_gradient(params, SMALL, tokens, weights, temperature=0.7)
    assert loss == pytest.approx(loss_only(params, tokens, weights / 2, 0.7), rel=1e-12)
    worst = worst_relative_error(params, grads, lambda p: loss_only(p, tokens, weights / 2, 0.7))
    assert worst < 1e-6


def test_weighted_nll_gradient_formula():
    logits = np.random.default_rng(4).normal(size=(1, 1, 5))
    loss, dlogits = weighted_nll(logits, np.array([[2]]), np.array([[3.0]]), temperature=2.0)
    pi = np.exp(logits[0, 0] / 2) / np.exp(logits[0, 0] / 2).sum()
    assert loss == pytest.approx(-3.0 * math.log(pi[2]))
    assert np.allclose(dlogits[0, 0], 3.0 / 2.0 * (pi - np.eye(5)[2]))


def test_text_batch_pads_after_the_end_and_the_padding_changes_nothing():
    config = ModelConfig(n_embd=8, n_head=2)                          # the whole vocabulary
    params = random_params(config, 14, scale=0.3)
    texts, starts = ["12+34=Final: 46", "7+5=12"], [6, 4]             # completions only
    tokens, mask = text_batch(texts, starts)
    assert tokens.shape == (2, 16) and (tokens[1, 6:] == EOT_ID).all()
    assert mask.sum(axis=1).tolist() == [10, 3] and decode(tokens[0]) == texts[0]
    both = token_log_probs(params, config, tokens, mask)
    for b, (text, start) in enumerate(zip(texts, starts, strict=True)):
        alone, alone_mask = text_batch([text], [start])
        assert np.allclose(both[b, :alone.shape[1]],
                           token_log_probs(params, config, alone, alone_mask)[0], atol=1e-12)
    loss, _ = language_model_loss(params, config, tokens, mask)
    assert loss == pytest.approx(-both.sum() / 13, rel=1e-12)
    with pytest.raises(ValueError, match="start"):
        text_batch(texts, [0, 4])


def test_losses_refuse_a_weight_on_the_first_token():
    params, tokens, mask, _ = gradient_instance()
    with pytest.raises(ValueError, match="first token"):
        language_model_loss(params, SMALL, tokens, np.ones_like(mask))


# -- sampling against enumeration -----------------------------------------------------------------

PROMPTS = np.array([[1, 2], [3, 1]])
MAX_NEW = 3


def every_completion() -> list[tuple[int, ...]]:
    """The 40 completions of at most 3 tokens: 13 ended by EOT, 27 cut at 3 tokens."""
    symbols = range(1, MICRO.vocab_size)
    ended = [(*head, EOT_ID) for n in range(MAX_NEW) for head in itertools.product(symbols,
                                                                                   repeat=n)]
    return ended + list(itertools.product(symbols, repeat=MAX_NEW))


def as_batch(prompt: np.ndarray, completions: list[tuple[int, ...]],
             ) -> tuple[np.ndarray, np.ndarray]:
    """(tokens, mask) for scoring: the prompt, the completion padded with EOT, the completion's
    tokens marked."""
    n, p = len(completions), len(prompt)
    tokens = np.full((n, p + MAX_NEW), EOT_ID)
    mask = np.zeros(tokens.shape, dtype=bool)
    tokens[:, :p] = prompt
    for row, completion in enumerate(completions):
        tokens[row, p:p + len(completion)] = completion
        mask[row, p:p + len(completion)] = True
    return tokens, mask


def chi_square_bound(dof: int, z: float = 3.09) -> float:
    """The 0.999 quantile of chi-square with `dof` degrees of freedom (Wilson-Hilferty)."""
    return dof * (1 - 2 / (9 * dof) + z * math.sqrt(2 / (9 * dof))) ** 3


@pytest.mark.parametrize("temperature", [1.0, 0.6])
def test_sampling_matches_the_enumerated_distribution(temperature):
    params = random_params(MICRO, 6, scale=0.3)
    completions = every_completion()
    index = {c: i for i, c in enumerate(completions)}
    n = 5_000
    samples = sample(params, MICRO, np.repeat(PROMPTS, n, axis=0), np.random.default_rng(6),
                     temperature=temperature, max_new=MAX_NEW)
    # what the sampler returns agrees with the scoring functions, row by row
    assert np.allclose(samples.log_probs.sum(axis=1),
                       sequence_log_probs(params, MICRO, samples.tokens, samples.mask,
                                          temperature), rtol=0, atol=1e-12)
    scored = token_log_probs(params, MICRO, samples.tokens, samples.mask, temperature)
    assert np.allclose(samples.log_probs, scored[:, 2:], rtol=0, atol=1e-12)
    assert np.allclose(samples.entropies, token_entropies(params, MICRO, samples.tokens,
                                                          samples.mask, temperature)[:, 2:])
    for k, prompt in enumerate(PROMPTS):
        tokens, mask = as_batch(prompt, completions)
        probs = np.exp(sequence_log_probs(params, MICRO, tokens, mask, temperature))
        assert probs.sum() == pytest.approx(1.0, abs=1e-12)
        assert 0.1 < probs.max() < 0.5                      # far from uniform (1/40), not peaked
        rows = samples.ids[k * n:(k + 1) * n]
        lengths = samples.lengths[k * n:(k + 1) * n]
        counts = np.bincount([index[tuple(row[:length])] for row, length
                              in zip(rows.tolist(), lengths.tolist(), strict=True)],
                             minlength=len(completions))
        expected = n * probs
        rare = expected < 5                               # pooled into one cell, as usual
        observed, expected = counts[~rare], expected[~rare]
        if rare.any():
            observed = np.append(observed, counts[rare].sum())
            expected = np.append(expected, n * probs[rare].sum())
        chi_square = ((observed - expected) ** 2 / expected).sum()
        assert chi_square < chi_square_bound(len(observed) - 1)


def test_sampling_texts_lengths_and_greedy_decoding():
    params = random_params(MICRO, 6, scale=0.3)
    samples = sample(params, MICRO, PROMPTS, np.random.default_rng(0), temperature=0.0,
                     max_new=MAX_NEW)
    tokens = PROMPTS
    for t in range(MAX_NEW):                                # greedy: the argmax at each step
        logits, _ = forward(params, MICRO, tokens)
        best = logits[:, -1].argmax(axis=1)
        live = samples.lengths > t
        assert (samples.ids[live, t] == best[live]).all()
        tokens = np.concatenate([tokens, best[:, None]], axis=1)
    assert (samples.log_probs == 0).all() and (samples.entropies == 0).all()
    assert samples.texts == [decode(row) for row in samples.ids]
    many = sample(params, MICRO, np.repeat(PROMPTS, 50, axis=0), np.random.default_rng(1),
                  max_new=MAX_NEW)
    for row, length, text in zip(many.ids, many.lengths, many.texts, strict=True):
        assert len(text) == length - (row[length - 1] == EOT_ID)
        assert (row[length:] == EOT_ID).all()
    assert many.mask.sum() == many.lengths.sum() and not many.mask[:, :2].any()


def test_policy_gradient_over_every_completion_is_the_gradient_of_expected_reward():
    """∇ Σ_y π(y) R(y) = Σ_y π(y) R(y) ∇log π(y): `policy_gradient` with weights N·π(y)·R(y)
    on each of the N completions (held fixed) returns -∇E[R]; checked along a random
    direction by central differences of E[R] itself."""
    params = random_params(MICRO, 7, scale=0.3)
    completions = every_completion()
    tokens, mask = as_batch(PROMPTS[0], completions)
    reward = np.random.default_rng(8).normal(size=len(completions))

    def expected_reward(p: Params) -> float:
        return float(np.exp(sequence_log_probs(p, MICRO, tokens, mask, 0.6)) @ reward)

    probs = np.exp(sequence_log_probs(params, MICRO, tokens, mask, 0.6))
    weights = (len(completions) * probs * reward)[:, None] * mask
    _, grads = policy_gradient(params, MICRO, tokens, weights, temperature=0.6)
    direction = {k: np.random.default_rng(9).normal(size=a.shape) for k, a in params.items()}
    h = 1e-5
    up = expected_reward({k: a + h * direction[k] for k, a in params.items()})
    down = expected_reward({k: a - h * direction[k] for k, a in params.items()})
    along = -sum(float((grads[k] * direction[k]).sum()) for k in params)
    assert along == pytest.approx((up - down) / (2 * h), rel=1e-7)


# -- causality ------------------------------------------------------------------------------------

def test_sequence_log_prob_is_the_sum_of_its_steps_one_prefix_at_a_time():
    params = random_params(SMALL, 10)
    tokens = np.random.default_rng(11).integers(0, SMALL.vocab_size, (3, 8))
    mask = np.ones(tokens.shape, dtype=bool)
    mask[:, 0] = False
    per_token = token_log_probs(params, SMALL, tokens, mask)
    for j in range(1, 8):
        logits, _ = forward(params, SMALL, tokens[:, :j])
        step = hand_log_probs(logits[:, -1], 1.0)[np.arange(3), tokens[:, j]]
        assert np.allclose(per_token[:, j], step, rtol=0, atol=1e-12)
    assert np.allclose(sequence_log_probs(params, SMALL, tokens, mask), per_token.sum(axis=1))
    changed = tokens.copy()
    changed[:, 5] = (changed[:, 5] + 1) % SMALL.vocab_size
    before, _ = forward(params, SMALL, tokens)
    after, _ = forward(params, SMALL, changed)
    assert (after[:, :5] == before[:, :5]).all() and not np.allclose(after[:, 5], before[:, 5])


def test_reading_on_from_cached_keys_and_values_equals_reading_whole():
    """`sample` reads one new token at a time after the prompt, reusing the keys and values
    of the positions before (`past`): the logits are those of a pass over the whole sequence,
    also for a subset of the rows."""
    params = random_params(SMALL, 12)
    tokens = np.random.default_rng(13).integers(0, SMALL.vocab_size, (3, 8))
    whole, _ = forward(params, SMALL, tokens)
    _, cache = forward(params, SMALL, tokens[:, :3])
    rows, keep = np.array([0, 2]), np.array([True, False, True])    # row 1 stops after 3
    for j in range(3, 8):
        logits, cache = forward(params, SMALL, tokens[rows, j:j + 1], cache.keys_values(keep))
        assert np.allclose(logits[:, 0], whole[rows, j], rtol=0, atol=1e-12)
        keep = np.ones(2, dtype=bool)
    with pytest.raises(ValueError, match="no `past`"):
        backward(params, SMALL, cache, np.zeros_like(logits))


# -- Adam -----------------------------------------------------------------------------------------

def test_adam_two_steps_by_hand():
    config = AdamConfig(lr=0.1, beta1=0.9, beta2=0.99, eps=1e-8, clip_norm=None)
    params = {"w": np.array([1.0])}
    state = adam_init(params)
    params1, state, norm = adam_step(params, {"w": np.array([0.5])}, state, config)
    # m = 0.05, v = 0.0025; m̂ = 0.5, v̂ = 0.25: a step of lr · 0.5 / (0.5 + ε)
    assert params["w"][0] == 1.0 and norm == 0.5
    assert params1["w"][0] == pytest.approx(1 - 0.1 * 0.5 / (0.5 + 1e-8), abs=1e-15)
    params2, state, _ = adam_step(params1, {"w": np.array([-0.2])}, state, config)
    # m = 0.9·0.05 - 0.1·0.2 = 0.025, v = 0.99·0.0025 + 0.01·0.04 = 0.002875
    m_hat, v_hat = 0.025 / (1 - 0.9**2), 0.002875 / (1 - 0.99**2)
    assert state.step == 2 and state.m["w"][0] == pytest.approx(0.025, abs=1e-15)
    assert params2["w"][0] == pytest.approx(
        params1["w"][0] - 0.1 * m_hat / (math.sqrt(v_hat) + 1e-8), abs=1e-15)


def test_adam_clips_the_global_norm():
    params = {"a": np.array([0.0]), "b": np.array([0.0])}
    grads = {"a": np.array([3.0]), "b": np.array([4.0])}
    _, state, norm = adam_step(params, grads, adam_init(params), AdamConfig(clip_norm=1.0))
    assert norm == 5.0 and isinstance(state, AdamState)
    assert state.m["a"][0] == pytest.approx(0.1 * 0.6) and state.m["b"][0] == pytest.approx(
        0.1 * 0.8)
