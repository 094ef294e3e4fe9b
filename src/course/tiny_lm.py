"""A tiny decoder-only transformer that writes characters: numpy, forward and backward by hand.

The token policy of `course.token_policy` is a table: what it learns for one prompt, no other
prompt reads. This module is a real (tiny) language model instead, GPT-2's architecture at the
size of a toy (nanoGPT's layout, written out): every prompt reads the same weights, so what is
learned on one prompt can carry over to another. It reads and writes one character at a time,
so `course.scorer.score` reads exactly the text the model writes.

    x_0      = E_tok[tokens] + E_pos[0..T-1]                       (B, T, C)
    x_{l+½}  = x_l     + Attn_l(LN(x_l))          causal, H heads
    x_{l+1}  = x_{l+½} + MLP_l(LN(x_{l+½}))       C -> 4C -> C, GELU
    logits   = LN(x_L) W_out                                       (B, T, V)

and π_θ(y_t | y_<t) = softmax(logits_{t-1} / τ)[y_t] at sampling temperature τ.

The module reads top to bottom:

1. the vocabulary (`VOCAB`, `encode`, `decode`) and the settings (`ModelConfig`);
2. the parameters: a dict of named arrays (`init_params`);
3. the layers, each a forward and a backward function side by side (embedding, linear,
   layer norm, GELU, causal self-attention), each backward naming the gradient it computes;
4. the model: `forward` (tokens -> logits, and a cache) and `backward` (dlogits -> grads);
5. the losses: next-character cross-entropy with a mask (pre-training) and the
   policy-gradient loss (RL), both one weighted negative log-likelihood; log-probabilities
   and entropies of given tokens;
6. sampling, batched, one character at a time, each step reading only the new character
   (the keys and values of the earlier positions are kept);
7. the optimiser: Adam with gradient-norm clipping.

Shapes: B sequences, T positions, C = `n_embd` channels, H = `n_head` heads of D = C/H
channels each, V = `vocab_size` tokens. numpy only, CPU only; tests/test_tiny_lm.py checks every
gradient against finite differences and the sampler against enumeration.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

# -- 1. the vocabulary and the settings -----------------------------------------------------------

EOT = "<eot>"
"""The end-of-text token: a completion ends when the model writes it. It also pads a batch
after a sequence's end (those positions are masked out of every loss)."""

VOCAB: tuple[str, ...] = (
    EOT, "\n", " ", "\xa0", *"0123456789", *"+-*=:.,", *"abcdefghijklmnopqrstuvwxyz", *"AFT",
)
"""Every character the model can read or write, id = index; 50 in all. Id 0 is `EOT`. The
prompts need digits, `+ - * =`; the course's answer format needs `Final: `, a minus sign and
digits; the rest lets the writers of pre-training text spell the near-misses of the frozen
rollouts (a newline, a no-break space, `.`, `,`, `**`, `final:`, `Answer:`, `The answer is`)."""

EOT_ID = 0
"""The id of `EOT`."""

CHAR_ID: dict[str, int] = {char: i for i, char in enumerate(VOCAB) if char != EOT}
"""Character -> id, for `encode`."""


def encode(text: str, *, end: bool = False) -> np.ndarray:
    """(n,) int64 ids of the characters of `text`, with `EOT_ID` appended if `end`. Raises
    ValueError naming any character outside `VOCAB`."""
    missing = sorted({char for char in text if char not in CHAR_ID})
    if missing:
        raise ValueError(f"characters outside the vocabulary: {missing!r}")
    ids = [CHAR_ID[char] for char in text]
    return np.array([*ids, EOT_ID] if end else ids, dtype=np.int64)


def decode(ids: Sequence[int] | np.ndarray) -> str:
    """The text of ids up to the first `EOT` (excluded)."""
    text = []
    for i in np.asarray(ids).tolist():
        if i == EOT_ID:
            break
        text.append(VOCAB[i])
    return "".join(text)


@dataclass(frozen=True)
class ModelConfig:
    """The shape of the model. The defaults: 2 layers, width 64, 4 heads, 32 positions."""

    vocab_size: int = len(VOCAB)
    """V, token ids 0..V-1, >= 2 (id 0 is `EOT`). `len(VOCAB)` = 50 for text; tests use
    smaller vocabularies (their ids decode as the first V entries of `VOCAB`)."""
    block_size: int = 32
    """The most positions the model reads at once, >= 1: a prompt such as `12+34=` (6
    characters) and its completion (`Final: 46` and `EOT`, 10) need 16. `sample` needs
    P + max_new - 1 <= block_size for prompts of length P."""
    n_layer: int = 2
    """Transformer blocks, >= 1."""
    n_embd: int = 64
    """C, the width of the residual stream, >= 1 and a multiple of `n_head`."""
    n_head: int = 4
    """H, attention heads per block, >= 1; each reads D = C/H channels."""
    dtype: Literal["float64", "float32"] = "float64"
    """The floating-point type of the parameters and of every computation. float64 keeps the
    finite-difference check tight; float32 is faster (benchmarks/bench_tiny_lm_step.py)."""

    def __post_init__(self) -> None:
        if min(self.vocab_size - 1, self.block_size, self.n_layer, self.n_head) < 1:
            raise ValueError("vocab_size >= 2 and block_size, n_layer, n_head >= 1")
        if self.n_embd < 1 or self.n_embd % self.n_head:
            raise ValueError(f"n_embd ({self.n_embd}) must be a positive multiple of "
                             f"n_head ({self.n_head})")


# -- 2. the parameters ----------------------------------------------------------------------------

Params = dict[str, np.ndarray]
"""Named arrays: `wte` (V, C), `wpe` (block_size, C); per block l, `h{l}.ln1.g`/`.b` (C,),
`h{l}.attn.w_qkv` (C, 3C), `.b_qkv` (3C,), `h{l}.attn.w_proj` (C, C), `.b_proj` (C,),
`h{l}.ln2.g`/`.b` (C,), `h{l}.mlp.w_fc` (C, 4C), `.b_fc` (4C,), `h{l}.mlp.w_proj` (4C, C),
`.b_proj` (C,); then `ln_f.g`/`.b` (C,) and `w_out` (C, V). Gradients use the same keys."""


def init_params(config: ModelConfig, rng: np.random.Generator) -> Params:
    """GPT-2's initialisation: weights ~ N(0, 0.02²), biases 0, layer-norm gains 1.

    The two projections that write into the residual stream in each block (`attn.w_proj`,
    `mlp.w_proj`) get std 0.02/√(2·n_layer): 2·n_layer such writes add up along the stream,
    and this keeps its variance at initialisation from growing with depth.

    The output head `w_out` is its own matrix, not tied to `wte` as in GPT-2: with 50
    characters, tying would save 3,200 of the default model's 108,544 parameters, and a
    separate head keeps one gradient per key in `backward`.
    """
    c, v = config.n_embd, config.vocab_size
    std, residual_std = 0.02, 0.02 / math.sqrt(2 * config.n_layer)
    shapes: dict[str, tuple[tuple[int, ...], float | str]] = {
        "wte": ((v, c), std), "wpe": ((config.block_size, c), std),
    }
    for layer in range(config.n_layer):
        h = f"h{layer}."
        shapes |= {
            h + "ln1.g": ((c,), "ones"), h + "ln1.b": ((c,), "zeros"),
            h + "attn.w_qkv": ((c, 3 * c), std), h + "attn.b_qkv": ((3 * c,), "zeros"),
            h + "attn.w_proj": ((c, c), residual_std), h + "attn.b_proj": ((c,), "zeros"),
            h + "ln2.g": ((c,), "ones"), h + "ln2.b": ((c,), "zeros"),
            h + "mlp.w_fc": ((c, 4 * c), std), h + "mlp.b_fc": ((4 * c,), "zeros"),
            h + "mlp.w_proj": ((4 * c, c), residual_std), h + "mlp.b_proj": ((c,), "zeros"),
        }
    shapes |= {"ln_f.g": ((c,), "ones"), "ln_f.b": ((c,), "zeros"), "w_out": ((c, v), std)}
    params = {}
    for name, (shape, how) in shapes.items():
        if how == "ones":
            array = np.ones(shape)
        elif how == "zeros":
            array = np.zeros(shape)
        else:
            array = rng.normal(0.0, float(how), shape)
        params[name] = array.astype(config.dtype)
    return params


def count_params(params: Params) -> int:
    """How many numbers the model learns."""
    return sum(array.size for array in params.values())


# -- 3. the layers, forward and backward ----------------------------------------------------------
#
# Each backward takes ∂L/∂(output) and the forward's cache, and returns ∂L/∂(input) and the
# gradients of the layer's parameters, for any scalar loss L.

def embedding_forward(tokens: np.ndarray, wte: np.ndarray, wpe: np.ndarray, offset: int = 0,
                      ) -> np.ndarray:
    """x[b, t] = wte[tokens[b, t]] + wpe[offset + t]: tokens (B, T) ints -> x (B, T, C). The
    offset is the number of positions before these (when sampling reuses keys and values)."""
    return wte[tokens] + wpe[offset: offset + tokens.shape[1]]


def embedding_backward(dx: np.ndarray, tokens: np.ndarray, wte: np.ndarray, wpe: np.ndarray,
                       ) -> tuple[np.ndarray, np.ndarray]:
    """dwte[v] = Σ_{b,t: tokens[b,t] = v} dx[b, t];  dwpe[t] = Σ_b dx[b, t] (0 for t >= T)."""
    dwte = np.zeros_like(wte)
    np.add.at(dwte, tokens.ravel(), dx.reshape(-1, dx.shape[-1]))
    dwpe = np.zeros_like(wpe)
    dwpe[: tokens.shape[1]] = dx.sum(axis=0)
    return dwte, dwpe


def linear_forward(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    """y = x W + b: x (..., n_in), W (n_in, n_out), b (n_out,) -> y (..., n_out). One matrix
    product over all B·T rows at once."""
    return (x.reshape(-1, w.shape[0]) @ w + b).reshape(*x.shape[:-1], w.shape[1])


def linear_backward(dy: np.ndarray, x: np.ndarray, w: np.ndarray,
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """dx = dy Wᵀ,  dW = Σ_rows xᵀ dy,  db = Σ_rows dy."""
    dy2, x2 = dy.reshape(-1, w.shape[1]), x.reshape(-1, w.shape[0])
    return (dy2 @ w.T).reshape(x.shape), x2.T @ dy2, dy2.sum(axis=0)


LN_EPS = 1e-5
"""ε in layer norm's √(var + ε), as in GPT-2."""


def layernorm_forward(x: np.ndarray, g: np.ndarray, b: np.ndarray,
                      ) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """y = g ⊙ x̂ + b,  x̂ = (x - mean(x)) / √(var(x) + ε), over the last axis (C).
    x (..., C) -> y (..., C); the cache is (x̂, 1/√(var + ε), g)."""
    mu = x.mean(axis=-1, keepdims=True)
    rstd = 1.0 / np.sqrt(x.var(axis=-1, keepdims=True) + LN_EPS)
    xhat = (x - mu) * rstd
    return g * xhat + b, (xhat, rstd, g)


def layernorm_backward(dy: np.ndarray, cache: tuple[np.ndarray, np.ndarray, np.ndarray],
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """With d = dy ⊙ g (the gradient reaching x̂):
    dx = (d - mean(d) - x̂ ⊙ mean(d ⊙ x̂)) / √(var + ε)   (means over C),
    dg = Σ_rows dy ⊙ x̂,  db = Σ_rows dy."""
    xhat, rstd, g = cache
    d = dy * g
    dx = (d - d.mean(axis=-1, keepdims=True)
          - xhat * (d * xhat).mean(axis=-1, keepdims=True)) * rstd
    rows = tuple(range(dy.ndim - 1))
    return dx, (dy * xhat).sum(axis=rows), dy.sum(axis=rows)


GELU_K = math.sqrt(2.0 / math.pi)
"""√(2/π), in GELU's tanh approximation."""


def gelu_forward(x: np.ndarray) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """GELU, tanh approximation (GPT-2): y = ½ x (1 + tanh(u)),  u = √(2/π)(x + 0.044715 x³).
    Any shape; the cache is (x, tanh u). (x·x·x, not x**3: numpy's general power is about 50
    times slower.)"""
    tanh_u = np.tanh(GELU_K * x * (1.0 + 0.044715 * x * x))
    return 0.5 * x * (1.0 + tanh_u), (x, tanh_u)


def gelu_backward(dy: np.ndarray, cache: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """dy/dx = ½(1 + tanh u) + ½ x (1 - tanh² u) · √(2/π)(1 + 3·0.044715 x²)."""
    x, tanh_u = cache
    slope = (0.5 * (1.0 + tanh_u)
             + 0.5 * x * (1.0 - tanh_u * tanh_u) * GELU_K * (1.0 + 3 * 0.044715 * x * x))
    return dy * slope


AttentionCache = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
KeysValues = tuple[np.ndarray, np.ndarray]
"""One layer's keys and values (B, H, S, D) at the S positions already read."""


def attention_forward(qkv: np.ndarray, n_head: int, past: KeysValues | None = None,
                      ) -> tuple[np.ndarray, AttentionCache]:
    """Causal multi-head self-attention, all heads at once.

    qkv (B, T, 3C), the queries, keys and values side by side -> y (B, T, C). Per head, with
    q, k, v (B, H, T, D):

        A = softmax(q kᵀ / √D + M),   M[t, s] = -∞ where s > t (no position reads a later one)
        y = A v,                        the heads concatenated back to (B, T, C)

    `past`: the keys and values of S earlier positions, put before this call's own (the
    queries are then positions S..S+T-1). The cache is (q, k, v, A): k, v (B, H, S+T, D),
    A (B, H, T, S+T).
    """
    b, t, c3 = qkv.shape
    d = c3 // (3 * n_head)
    q, k, v = qkv.reshape(b, t, 3, n_head, d).transpose(2, 0, 3, 1, 4)   # each (B, H, T, D)
    if past is not None:
        k, v = np.concatenate([past[0], k], axis=2), np.concatenate([past[1], v], axis=2)
    s = k.shape[2]
    scores = (q @ k.transpose(0, 1, 3, 2)) * (1.0 / math.sqrt(d))     # (B, H, T, S+T)
    scores = np.where(np.tri(t, s, s - t, dtype=bool), scores, -np.inf)   # key <= query
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights /= weights.sum(axis=-1, keepdims=True)
    y = (weights @ v).transpose(0, 2, 1, 3).reshape(b, t, c3 // 3)
    return y, (q, k, v, weights)


def attention_backward(dy: np.ndarray, cache: AttentionCache) -> np.ndarray:
    """dy (B, T, C) -> dqkv (B, T, 3C). Through y = A v:  dA = dy vᵀ,  dv = Aᵀ dy. Through
    the softmax of each row (its Jacobian diag(a) - a aᵀ):  dS = A ⊙ (dA - Σ_s A ⊙ dA),
    which is 0 where the mask put -∞. Through S = q kᵀ/√D:  dq = dS k/√D,  dk = dSᵀ q/√D."""
    q, k, v, weights = cache
    b, h, t, d = q.shape
    dy = dy.reshape(b, t, h, d).transpose(0, 2, 1, 3)                  # (B, H, T, D)
    dweights = dy @ v.transpose(0, 1, 3, 2)
    dv = weights.transpose(0, 1, 3, 2) @ dy
    dscores = weights * (dweights - (weights * dweights).sum(axis=-1, keepdims=True))
    dscores *= 1.0 / math.sqrt(d)
    dq = dscores @ k
    dk = dscores.transpose(0, 1, 3, 2) @ q
    return np.stack([dq, dk, dv]).transpose(1, 3, 0, 2, 4).reshape(b, t, 3 * h * d)


# -- 4. the model ---------------------------------------------------------------------------------

@dataclass
class Cache:
    """What `forward` keeps for `backward`: the inputs of each layer, per block in order."""

    tokens: np.ndarray
    blocks: list[dict[str, Any]]
    ln_f: tuple[np.ndarray, np.ndarray, np.ndarray]
    final: np.ndarray
    """(B, T, C): the final layer norm's output, the head's input."""
    offset: int
    """Positions read before `tokens` (0 unless `forward` was given `past`)."""

    def keys_values(self, rows: np.ndarray) -> list[KeysValues]:
        """Each layer's keys and values at every position read so far, for the given rows:
        the `past` of a next `forward` call on those rows."""
        return [(block["attn"][1][rows], block["attn"][2][rows]) for block in self.blocks]


def forward(params: Params, config: ModelConfig, tokens: np.ndarray,
            past: list[KeysValues] | None = None) -> tuple[np.ndarray, Cache]:
    """tokens (B, T) ints in [0, V) -> logits (B, T, V) and the cache.

    logits[b, t] scores the token after tokens[b, :t+1]: position t reads positions 0..t only.

    `past` (from `Cache.keys_values`): the keys and values of S positions read before, so that
    `tokens` sit at positions S..S+T-1 and read those too, without computing them again (as
    `sample` does, one new token at a time). S + T <= block_size. `backward` needs a cache
    made without `past`.
    """
    tokens = np.asarray(tokens)
    offset = 0 if past is None else past[0][0].shape[2]
    if tokens.shape[1] < 1 or offset + tokens.shape[1] > config.block_size:
        raise ValueError(f"{offset} + {tokens.shape[1]} positions; the model reads 1 to "
                         f"{config.block_size}")
    x = embedding_forward(tokens, params["wte"], params["wpe"], offset)
    blocks = []
    for layer in range(config.n_layer):
        p = f"h{layer}."
        cache: dict[str, Any] = {}
        a, cache["ln1"] = layernorm_forward(x, params[p + "ln1.g"], params[p + "ln1.b"])
        qkv = linear_forward(a, params[p + "attn.w_qkv"], params[p + "attn.b_qkv"])
        y, cache["attn"] = attention_forward(qkv, config.n_head,
                                             None if past is None else past[layer])
        x = x + linear_forward(y, params[p + "attn.w_proj"], params[p + "attn.b_proj"])
        m, cache["ln2"] = layernorm_forward(x, params[p + "ln2.g"], params[p + "ln2.b"])
        u = linear_forward(m, params[p + "mlp.w_fc"], params[p + "mlp.b_fc"])
        z, cache["gelu"] = gelu_forward(u)
        x = x + linear_forward(z, params[p + "mlp.w_proj"], params[p + "mlp.b_proj"])
        cache |= {"a": a, "y": y, "m": m, "z": z}
        blocks.append(cache)
    final, ln_f = layernorm_forward(x, params["ln_f.g"], params["ln_f.b"])
    logits = final @ params["w_out"]                                     # no bias in the head
    return logits, Cache(tokens, blocks, ln_f, final, offset)


def backward(params: Params, config: ModelConfig, cache: Cache, dlogits: np.ndarray) -> Params:
    """dlogits = ∂L/∂logits (B, T, V) -> ∂L/∂θ for every key of `params`, same shapes.

    The forward pass in reverse. Along the residual stream x_{l+1} = x_l + f(x_l) the gradient
    is the sum of the two paths: dx_l = dx_{l+1} + (∂f/∂x_l)ᵀ dx_{l+1}.
    """
    if cache.offset:
        raise ValueError("backward needs a forward pass over whole sequences (no `past`)")
    grads: Params = {}
    v = params["w_out"].shape[1]
    final2 = cache.final.reshape(-1, cache.final.shape[-1])
    grads["w_out"] = final2.T @ dlogits.reshape(-1, v)                    # dW = Σ_rows xᵀ dy
    dx, grads["ln_f.g"], grads["ln_f.b"] = layernorm_backward(dlogits @ params["w_out"].T,
                                                              cache.ln_f)
    for layer in reversed(range(config.n_layer)):
        p, c = f"h{layer}.", cache.blocks[layer]
        dz, grads[p + "mlp.w_proj"], grads[p + "mlp.b_proj"] = linear_backward(
            dx, c["z"], params[p + "mlp.w_proj"])
        dm, grads[p + "mlp.w_fc"], grads[p + "mlp.b_fc"] = linear_backward(
            gelu_backward(dz, c["gelu"]), c["m"], params[p + "mlp.w_fc"])
        dx_mlp, grads[p + "ln2.g"], grads[p + "ln2.b"] = layernorm_backward(dm, c["ln2"])
        dx = dx + dx_mlp
        dy, grads[p + "attn.w_proj"], grads[p + "attn.b_proj"] = linear_backward(
            dx, c["y"], params[p + "attn.w_proj"])
        da, grads[p + "attn.w_qkv"], grads[p + "attn.b_qkv"] = linear_backward(
            attention_backward(dy, c["attn"]), c["a"], params[p + "attn.w_qkv"])
        dx_attn, grads[p + "ln1.g"], grads[p + "ln1.b"] = layernorm_backward(da, c["ln1"])
        dx = dx + dx_attn
    grads["wte"], grads["wpe"] = embedding_backward(dx, cache.tokens, params["wte"],
                                                    params["wpe"])
    return {name: grads[name] for name in params}


# -- 5. the losses, and the log-probabilities of given tokens ------------------------------------
#
# Both losses are one weighted negative log-likelihood of the next token: pre-training weighs
# the counted positions equally, RL weighs each completion by its advantage. Masks and weights
# are aligned with `tokens` (B, L): entry j is about token j, predicted from tokens[:, :j] by
# the logits at position j - 1. Entry 0 is never predicted and must be 0.

def log_softmax(z: np.ndarray) -> np.ndarray:
    """log softmax over the last axis: z - max - log Σ exp(z - max) (stable for any z)."""
    top = z.max(axis=-1, keepdims=True)
    return z - top - np.log(np.exp(z - top).sum(axis=-1, keepdims=True))


def weighted_nll(logits: np.ndarray, targets: np.ndarray, weights: np.ndarray,
                 temperature: float = 1.0) -> tuple[float, np.ndarray]:
    """L = -Σ_{b,t} w[b,t] · log π_τ(targets[b,t]),  π_τ = softmax(logits[b,t] / τ).

    logits (B, T, V), targets (B, T) ints, weights (B, T), τ > 0 -> (L, ∂L/∂logits (B, T, V)),
    where ∂L/∂logits[b,t] = (w[b,t] / τ) · (π_τ - onehot(targets[b,t])).
    """
    log_probs = log_softmax(logits / temperature)
    picked = np.take_along_axis(log_probs, targets[..., None], axis=-1)[..., 0]
    loss = -float((weights * picked).sum())
    onehot = np.eye(logits.shape[-1], dtype=logits.dtype)[targets]
    dlogits = (np.exp(log_probs) - onehot) * (weights / temperature)[..., None]
    return loss, dlogits.astype(logits.dtype, copy=False)


def _shift(tokens: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(inputs, targets, target weights): the logits at position j - 1 predict token j."""
    tokens, weights = np.asarray(tokens), np.asarray(weights)
    if tokens.ndim != 2 or tokens.shape[1] < 2 or weights.shape != tokens.shape:
        raise ValueError(f"tokens (B, L >= 2) and weights of the same shape, got "
                         f"{tokens.shape} and {weights.shape}")
    if np.any(weights[:, 0]):
        raise ValueError("weights[:, 0] must be 0: no position predicts the first token")
    return tokens[:, :-1], tokens[:, 1:], weights[:, 1:]


def text_batch(texts: Sequence[str], scored_from: Sequence[int] | None = None,
               ) -> tuple[np.ndarray, np.ndarray]:
    """(tokens, mask), both (B, L), for the losses: each text's ids then `EOT`, padded with
    `EOT` to the longest (L = its length + 1). mask[b] marks text b's characters from index
    scored_from[b] (default 1: all but the first, which nothing predicts; a prompt's length:
    the completion only) through its `EOT`, and no padding."""
    ids = [encode(text, end=True) for text in texts]
    starts = [1] * len(ids) if scored_from is None else list(scored_from)
    if len(starts) != len(ids):
        raise ValueError(f"{len(starts)} starts for {len(ids)} texts")
    if any(not 1 <= start < len(row) for start, row in zip(starts, ids, strict=True)):
        raise ValueError("each start must be in 1..len(text)")
    tokens = np.full((len(ids), max(len(row) for row in ids)), EOT_ID)
    mask = np.zeros(tokens.shape, dtype=bool)
    for b, (row, start) in enumerate(zip(ids, starts, strict=True)):
        tokens[b, :len(row)] = row
        mask[b, start:len(row)] = True
    return tokens, mask


def language_model_loss(params: Params, config: ModelConfig, tokens: np.ndarray,
                        mask: np.ndarray) -> tuple[float, Params]:
    """Next-character cross-entropy over the marked tokens, and its gradient (pre-training).

    tokens (B, L) ints, mask (B, L) bool (mask[:, 0] False): e.g. a whole line but its first
    character, or a completion only; pad after `EOT` and leave the padding unmarked.

        L(θ) = -(1/M) Σ_{b,j: mask[b,j]} log π_θ(tokens[b,j] | tokens[b,:j]),   M = Σ mask

    Returns (L in nats per marked token, ∂L/∂θ).
    """
    inputs, targets, marked = _shift(tokens, mask)
    logits, cache = forward(params, config, inputs)
    weights = marked / max(int(marked.sum()), 1)
    loss, dlogits = weighted_nll(logits, targets, weights)
    return loss, backward(params, config, cache, dlogits)


def policy_gradient(params: Params, config: ModelConfig, tokens: np.ndarray,
                    weights: np.ndarray, temperature: float = 1.0) -> tuple[float, Params]:
    """The policy-gradient (REINFORCE) surrogate loss and its gradient (RL).

    tokens (B, L): prompts and sampled completions (`Samples.tokens`); weights (B, L): w[i,j]
    on completion tokens, 0 elsewhere; for one advantage A_i per completion,
    `A[:, None] * samples.mask`, or shaped per token (a per-token KL penalty, a length
    normalisation). With π_τ the sampling distribution at temperature τ:

        L(θ) = -(1/N) Σ_i Σ_j w[i,j] · log π_τ(tokens[i,j] | tokens[i,:j]),   N = B

    With w[i,j] = A_i, -∇L = (1/N) Σ_i A_i ∇log π_τ(y_i | x_i) is the REINFORCE estimate of
    the gradient of the expected reward: the weights are numbers computed beforehand, not
    functions of θ, so no gradient flows through them. Returns (L, ∂L/∂θ).
    """
    inputs, targets, shifted = _shift(tokens, weights)
    logits, cache = forward(params, config, inputs)
    loss, dlogits = weighted_nll(logits, targets, shifted / len(tokens), temperature)
    return loss, backward(params, config, cache, dlogits)


def token_log_probs(params: Params, config: ModelConfig, tokens: np.ndarray, mask: np.ndarray,
                    temperature: float = 1.0) -> np.ndarray:
    """(B, L): log π_τ(tokens[b,j] | tokens[b,:j]) where mask[b,j], 0 elsewhere (mask[:, 0]
    must be False). In nats, <= 0."""
    inputs, targets, marked = _shift(tokens, mask)
    logits, _ = forward(params, config, inputs)
    log_probs = log_softmax(logits / temperature)
    picked = np.take_along_axis(log_probs, targets[..., None], axis=-1)[..., 0]
    out = np.zeros(np.shape(tokens))
    out[:, 1:] = np.where(marked, picked, 0.0)
    return out


def sequence_log_probs(params: Params, config: ModelConfig, tokens: np.ndarray,
                       mask: np.ndarray, temperature: float = 1.0) -> np.ndarray:
    """(B,): log π_τ(y | x) = Σ_j log π_τ(y_j | x, y_<j) over the marked tokens of each row."""
    return token_log_probs(params, config, tokens, mask, temperature).sum(axis=1)


def entropy(logits: np.ndarray, temperature: float = 1.0) -> np.ndarray:
    """(...): H(π_τ) = -Σ_v π_τ(v) log π_τ(v) in nats, π_τ = softmax(logits / τ); logits
    (..., V). Between 0 and log V."""
    log_probs = log_softmax(logits / temperature)
    return -(np.exp(log_probs) * log_probs).sum(axis=-1)


def token_entropies(params: Params, config: ModelConfig, tokens: np.ndarray, mask: np.ndarray,
                    temperature: float = 1.0) -> np.ndarray:
    """(B, L): the entropy of the distribution token j was drawn from, where mask[b,j]; 0
    elsewhere (mask[:, 0] must be False)."""
    inputs, _, marked = _shift(tokens, mask)
    logits, _ = forward(params, config, inputs)
    out = np.zeros(np.shape(tokens))
    out[:, 1:] = np.where(marked, entropy(logits, temperature), 0.0)
    return out


# -- 6. sampling ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Samples:
    """B completions of B prompts, written side by side. Arrays over the completion are
    (B, max_new); after a completion's `EOT` they hold `EOT_ID` and 0."""

    prompts: np.ndarray
    """(B, P) the prompt ids."""
    ids: np.ndarray
    """(B, max_new) the completion ids, `EOT` included when written."""
    log_probs: np.ndarray
    """(B, max_new) log π_τ of each written token under the distribution it was drawn from."""
    entropies: np.ndarray
    """(B, max_new) the entropy in nats of that distribution."""
    texts: list[str]
    """The completions' texts, up to `EOT` (what `score()` reads)."""

    @property
    def lengths(self) -> np.ndarray:
        """(B,) tokens written per completion, `EOT` included (max_new if cut there)."""
        written = self.ids != EOT_ID
        ended = ~written.all(axis=1)
        return np.where(ended, written.argmin(axis=1) + 1, self.ids.shape[1])

    @property
    def tokens(self) -> np.ndarray:
        """(B, P + max_new) prompt then completion: the input of the losses above."""
        return np.concatenate([self.prompts, self.ids], axis=1)

    @property
    def mask(self) -> np.ndarray:
        """(B, P + max_new) bool: True on the completion's written tokens (`EOT` included)."""
        written = np.arange(self.ids.shape[1]) < self.lengths[:, None]
        return np.concatenate([np.zeros(self.prompts.shape, dtype=bool), written], axis=1)


def encode_prompts(prompts: Sequence[str]) -> np.ndarray:
    """(B, P) ids of B prompts of the same length P (`sample` writes them side by side)."""
    if len({len(prompt) for prompt in prompts}) != 1:
        raise ValueError("the prompts of one batch must have one length, >= 1")
    return np.stack([encode(prompt) for prompt in prompts])


def sample(params: Params, config: ModelConfig, prompts: np.ndarray | Sequence[str],
           rng: np.random.Generator, temperature: float = 1.0, max_new: int = 12) -> Samples:
    """One completion per prompt, all B written side by side, one character per step.

    prompts: (B, P) ids, or B strings of one length P (`encode_prompts`); P + max_new - 1 <=
    block_size. The model reads the prompts, then at each step draws the next token of every
    unfinished sequence from π_τ = softmax(logits / τ) by inverse CDF (one uniform number per
    sequence) and reads only that token, reusing the keys and values of the positions before
    (`Cache.keys_values`). A completion ends at `EOT`, or is cut after `max_new` tokens.

    temperature τ > 0; τ = 0 means greedy decoding (the most likely token; ties go to the
    lowest id), a point mass whose log-probabilities and entropies are 0.
    """
    prompt_ids = encode_prompts(prompts) if not isinstance(prompts, np.ndarray) else prompts
    b, p = prompt_ids.shape
    if temperature < 0 or max_new < 1 or p + max_new - 1 > config.block_size:
        raise ValueError(f"need τ >= 0, max_new >= 1 and P + max_new - 1 <= "
                         f"{config.block_size}; got τ = {temperature}, P = {p}, "
                         f"max_new = {max_new}")
    ids = np.full((b, max_new), EOT_ID)
    log_probs, entropies = np.zeros((b, max_new)), np.zeros((b, max_new))
    alive = np.arange(b)                                    # the rows still writing
    logits, cache = forward(params, config, prompt_ids)
    for t in range(max_new):
        last = logits[:, -1].astype(np.float64)             # (n, V) scores of the next token
        if temperature == 0:
            y = last.argmax(axis=1)
        else:
            step_log_probs = log_softmax(last / temperature)
            cdf = np.cumsum(np.exp(step_log_probs), axis=1)
            u = rng.random(len(alive)) * cdf[:, -1]
            y = np.minimum((u[:, None] >= cdf).sum(axis=1), last.shape[1] - 1)
            log_probs[alive, t] = step_log_probs[np.arange(len(alive)), y]
            entropies[alive, t] = entropy(last, temperature)
        ids[alive, t] = y
        going = y != EOT_ID
        alive = alive[going]
        if not len(alive) or t == max_new - 1:
            break
        logits, cache = forward(params, config, y[going, None], cache.keys_values(going))
    return Samples(prompt_ids, ids, log_probs, entropies, [decode(row) for row in ids])


# -- 7. the optimiser: Adam -----------------------------------------------------------------------

@dataclass(frozen=True)
class AdamConfig:
    """Adam's settings (Kingma & Ba 2015), with optional gradient-norm clipping."""

    lr: float = 1e-3
    """Step size α > 0: with bias correction, each weight moves about α per step at most."""
    beta1: float = 0.9
    """β₁ in [0, 1): decay of the running mean of gradients."""
    beta2: float = 0.99
    """β₂ in [0, 1): decay of the running mean of squared gradients (0.99, as nanoGPT uses for
    small models, forgets faster than the paper's 0.999)."""
    eps: float = 1e-8
    """ε > 0, added to √v̂ so that a weight with no gradient yet does not divide by 0."""
    clip_norm: float | None = 1.0
    """c > 0: a gradient whose global norm ‖g‖ (over every parameter) exceeds c is scaled to
    norm c first. None: never clip."""


@dataclass(frozen=True)
class AdamState:
    """Adam's running means after `step` updates; m and v have the keys and shapes of the
    parameters."""

    step: int
    m: Params
    v: Params


def adam_init(params: Params) -> AdamState:
    """Zero running means, step 0."""
    return AdamState(0, {k: np.zeros_like(a) for k, a in params.items()},
                     {k: np.zeros_like(a) for k, a in params.items()})


def global_norm(grads: Params) -> float:
    """‖g‖ = √(Σ over every parameter of g²)."""
    return math.sqrt(sum(float(np.vdot(g, g)) for g in grads.values()))


def adam_step(params: Params, grads: Params, state: AdamState, config: AdamConfig,
              ) -> tuple[Params, AdamState, float]:
    """One Adam update; returns new parameters and state (the inputs are not changed) and the
    gradient's global norm before clipping. At step t = state.step + 1:

        g ← g · min(1, c / ‖g‖)                     (if clip_norm = c)
        m ← β₁ m + (1 - β₁) g,       v ← β₂ v + (1 - β₂) g²
        m̂ = m / (1 - β₁ᵗ),           v̂ = v / (1 - β₂ᵗ)          (bias correction)
        θ ← θ - α m̂ / (√v̂ + ε)
    """
    norm = global_norm(grads)
    scale = 1.0
    if config.clip_norm is not None and norm > config.clip_norm:
        scale = config.clip_norm / norm
    t = state.step + 1
    new_params, m, v = {}, {}, {}
    for name, theta in params.items():
        g = grads[name] * scale
        m[name] = config.beta1 * state.m[name] + (1 - config.beta1) * g
        v[name] = config.beta2 * state.v[name] + (1 - config.beta2) * g * g
        m_hat = m[name] / (1 - config.beta1**t)
        v_hat = v[name] / (1 - config.beta2**t)
        new_params[name] = (theta - config.lr * m_hat / (np.sqrt(v_hat) + config.eps)
                            ).astype(theta.dtype, copy=False)
    return new_params, AdamState(t, m, v), norm
