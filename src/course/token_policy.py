"""A policy that writes text, one token at a time: small enough to read and to enumerate.

Every learner before this one chose among a handful of whole completion *styles*. This one
writes a completion piece by piece from a fixed vocabulary, the way a language model does:

    π_θ(y | x) = Π_t π_θ(y_t | x, y_<t),      log π_θ(y | x) = Σ_t log π_θ(y_t | x, y_<t)

where x is the problem, y_t the piece chosen at step t and y_<t the pieces before it. The
completion ends at the end-of-sequence piece, or after `T_MAX` pieces. Its text, and only its
text, goes to `course.scorer.score`.

The module reads top to bottom:

1. the vocabulary: the pieces, with their cl100k_base token ids where a piece is one token;
2. the state a choice depends on (`State`): the problem, the previous piece, how many digits
   in a row were just written, and the step;
3. the policy: a log-linear model, logits = Σ_j W_j[row_j(state)], one table per feature;
4. sampling, and the log-probability of a given completion;
5. the reference policy (the "SFT model"), fitted by counting pieces in the frozen rollouts;
6. enumeration of every sequence, for checking all of the above on a tiny instance.

numpy only, CPU only: no model is downloaded and nothing here is a framework.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import product
from typing import Any

import numpy as np

# -- 1. the vocabulary ----------------------------------------------------------------------------

EOS = "<eos>"

PIECES: tuple[tuple[str, tuple[int, ...]], ...] = (
    # (text, its cl100k_base token ids): one id where the piece is one real token
    (EOS, (100257,)),                   # <|endoftext|>, a special token
    ("Final", (19918,)), (":", (25,)), (" ", (220,)), ("-", (12,)),
    *((str(d), (15 + d,)) for d in range(10)),
    ("\n", (198,)), (".", (13,)), (",", (11,)), ("**", (334,)), (" or", (477,)),
    ("The answer is", (791, 4320, 374)),  # three tokens in cl100k_base, one piece here
)
"""What in-spec answers need (`Final`, `:`, a space, `-`, digits, the end) and what the frozen
near-misses are made of (a newline, `.`, `,`, `**`, ` or`, `The answer is`). Unlike
cl100k_base, which writes `323` as one token (15726), this vocabulary writes one digit per
piece: the answer is spelled, and learned, digit by digit."""

T_MAX = 12
"""At most 12 pieces per completion; a completion without `<eos>` by then is cut there."""

RUN_MAX = 8
"""Digit runs are counted up to 8 (a longer run shares the state of the 8th digit)."""


@dataclass(frozen=True)
class Vocabulary:
    """The pieces a policy can write. Index 0 is always `<eos>`."""

    pieces: tuple[str, ...] = tuple(text for text, _ in PIECES)

    def __post_init__(self) -> None:
        if self.pieces[0] != EOS or len(set(self.pieces)) != len(self.pieces):
            raise ValueError("a vocabulary starts with <eos> and has no piece twice")

    @property
    def size(self) -> int:
        return len(self.pieces)

    @functools.cached_property
    def digits(self) -> np.ndarray:
        """(V,) bool: which pieces are a single decimal digit."""
        return np.array([p.isdigit() and len(p) == 1 for p in self.pieces])

    def render(self, ids: Sequence[int]) -> str:
        """The completion text of a piece sequence: the pieces joined, up to `<eos>`."""
        text = []
        for i in ids:
            if i == 0:
                break
            text.append(self.pieces[i])
        return "".join(text)

    def encode(self, text: str) -> list[int] | None:
        """`text` as pieces by greedy longest match, `<eos>` appended; None if some character
        is in no piece (a no-break space, `+`, `=`: the policy cannot write it). Greedy is exact
        for `PIECES`, where a text splits into pieces in only one way (tests check it); with
        overlapping pieces it could miss a spelling."""
        by_length = sorted(range(1, self.size), key=lambda i: -len(self.pieces[i]))
        ids, at = [], 0
        while at < len(text):
            match = next((i for i in by_length if text.startswith(self.pieces[i], at)), None)
            if match is None:
                return None
            ids.append(match)
            at += len(self.pieces[match])
        return [*ids, 0]


# -- 2. the state a choice depends on -------------------------------------------------------------

@dataclass
class State:
    """Where N completions stand before step t; every array has shape (N,)."""

    x: np.ndarray         # the problem each completion answers, an index in [0, P)
    prev: np.ndarray      # the previous piece, or -1 at the start
    run: np.ndarray       # digits written in a row just before this step, 0..RUN_MAX
    prefix: np.ndarray    # the whole prefix as one integer (used only by tiny test instances)
    t: int = 0            # the step, 0..T_MAX-1

    @classmethod
    def start(cls, x: np.ndarray) -> State:
        n = len(x)
        return cls(np.asarray(x), np.full(n, -1), np.zeros(n, int), np.zeros(n, int))

    def after(self, y: np.ndarray, vocab: Vocabulary) -> State:
        """The state after writing pieces `y` (N,)."""
        is_digit = vocab.digits[y]
        run = np.where(is_digit, np.minimum(self.run + 1, RUN_MAX), 0)
        return State(self.x, y, run, self.prefix * vocab.size + y + 1, self.t + 1)


Feature = Callable[[State], np.ndarray]
"""A state -> table row function: which row of a weight table a choice reads."""


def by_previous_piece(state: State) -> np.ndarray:
    """Row = the previous piece (0 at the start, else piece + 1): shared by every problem."""
    return state.prev + 1


def by_problem_and_run(state: State) -> np.ndarray:
    """Row = (problem, digits in a row so far): where a policy can know *this* problem's
    answer, digit by digit, and when to stop writing it."""
    return state.x * (RUN_MAX + 1) + state.run


def by_problem_previous_and_run(vocab_size: int) -> Feature:
    """Row = (problem, previous piece, digits in a row): the context the reference counts in
    (the run tells the first `3` of `323` from the last)."""
    rows_per_problem = (vocab_size + 1) * (RUN_MAX + 1)
    return lambda state: (state.x * rows_per_problem + (state.prev + 1) * (RUN_MAX + 1)
                          + state.run)


# -- 3. the policy: logits = Σ_j W_j[row_j(state)] ------------------------------------------------

@dataclass
class Policy:
    """A log-linear autoregressive policy: π(· | state) = softmax(base(state) + Σ_j W_j[row_j]).

    `base` is a frozen policy whose log-probabilities are added (the reference, for a learner
    that starts from it and moves only through its own tables); `tables[j]` has one row per
    value of `features[j]` and one column per piece. Only `tables` are learned.
    """

    vocab: Vocabulary
    features: tuple[Feature, ...]
    tables: list[np.ndarray]
    base: Policy | None = None
    t_max: int = T_MAX
    shared_by: tuple[int, ...] = ()
    """How many problems read the rows of each table: 1 for a table with rows per problem, P
    for a table every problem shares. `course.learn` divides each table's step by it. Empty
    means 1 for every table."""
    normalised: bool = False
    """True when the one table's rows are log-probabilities already (the counted reference,
    never trained): then log π(· | state) is the row itself, not normalised again each step."""

    def logits(self, state: State, base_log_probs: np.ndarray | None = None) -> np.ndarray:
        """(N, V) unnormalised log-probabilities of the next piece. `base_log_probs`: the base
        policy's log-probabilities at `state`, when the caller has them already."""
        if self.base is None:
            total: Any = 0.0
        else:
            total = base_log_probs if base_log_probs is not None else self.base.log_probs(state)
        for feature, table in zip(self.features, self.tables, strict=True):
            total = total + table[feature(state)]
        return np.asarray(total)

    def log_probs(self, state: State, base_log_probs: np.ndarray | None = None) -> np.ndarray:
        """(N, V) log π(y | state), by log-softmax (stable for any logits, -inf allowed)."""
        z = self.logits(state, base_log_probs)
        return z if self.normalised else log_softmax(z)


def log_softmax(z: np.ndarray) -> np.ndarray:
    """log softmax over the last axis: z - max - log Σ exp(z - max), row by row."""
    top = np.max(z, axis=-1, keepdims=True)
    return z - top - np.log(np.exp(z - top).sum(axis=-1, keepdims=True))


# -- 4. sampling, and the log-probability of a completion ----------------------------------------

@dataclass
class Rollouts:
    """N sampled completions. `ids` is (N, T_MAX), padded with -1 after `<eos>`."""

    x: np.ndarray
    ids: np.ndarray
    texts: list[str] = field(default_factory=list)
    log_probs: list[np.ndarray] = field(default_factory=list)
    """Per step t, the (N, V) log π(· | s_t) that `sample` drew piece t from, so that a learner
    need not compute them again (a row means nothing once its completion has ended)."""
    base_log_probs: list[np.ndarray] = field(default_factory=list)
    """The same for the policy's base (its reference), when it has one."""

    @property
    def lengths(self) -> np.ndarray:
        """Pieces per completion, `<eos>` included."""
        return (self.ids >= 0).sum(axis=1)

    def put(self, rows: np.ndarray, other: Rollouts) -> None:
        """Write the completions of `other`, one per entry of `rows`, over those rows."""
        self.ids[rows] = other.ids
        for row, text in zip(rows.tolist(), other.texts, strict=True):
            self.texts[row] = text
        for mine, theirs in ((self.log_probs, other.log_probs),
                             (self.base_log_probs, other.base_log_probs)):
            for t, step in enumerate(theirs):
                if t == len(mine):                # `other` wrote longer than any row here
                    mine.append(np.zeros_like(mine[0]))
                mine[t][rows] = step


def sample(policy: Policy, x: np.ndarray, rng: np.random.Generator) -> Rollouts:
    """One completion per entry of `x` (problem indices), all N written side by side.

    At each step, one uniform u per completion picks the piece whose cumulative probability
    first exceeds u (inverse CDF). A completion stops at `<eos>`; its later steps are padding.
    """
    n = len(x)
    ids = np.full((n, policy.t_max), -1)
    alive = np.ones(n, bool)
    state = State.start(np.asarray(x))
    drawn_from, base_drawn_from = [], []
    for t in range(policy.t_max):
        base = None if policy.base is None else policy.base.log_probs(state)
        log_probs = policy.log_probs(state, base)
        drawn_from.append(log_probs)
        if base is not None:
            base_drawn_from.append(base)
        cdf = np.cumsum(np.exp(log_probs), axis=1)
        u = rng.random(n) * cdf[:, -1]
        y = np.minimum((u[:, None] >= cdf).sum(axis=1), policy.vocab.size - 1)
        ids[alive, t] = y[alive]
        alive &= y != 0
        state = state.after(y, policy.vocab)
        if not alive.any():
            break
    rows = [tuple(row) for row in ids.tolist()]          # -1 padding comes after <eos> only
    text_of = {row: policy.vocab.render(row) for row in set(rows)}   # each distinct one once
    return Rollouts(np.asarray(x), ids, [text_of[row] for row in rows], drawn_from,
                    base_drawn_from)


def step_states(policy: Policy, rollouts: Rollouts) -> list[tuple[State, np.ndarray]]:
    """For each step t: the state before it and the piece chosen (-1 where already ended)."""
    steps, state = [], State.start(rollouts.x)
    for t in range(policy.t_max):
        y = rollouts.ids[:, t]
        if (y < 0).all():
            break
        steps.append((state, y))
        state = state.after(np.maximum(y, 0), policy.vocab)
    return steps


def token_log_probs(policy: Policy, rollouts: Rollouts) -> np.ndarray:
    """(N, T_MAX) log π(y_t | x, y_<t) for each piece written; 0 after a completion ended."""
    out = np.zeros(rollouts.ids.shape)
    for t, (state, y) in enumerate(step_states(policy, rollouts)):
        live = y >= 0
        out[live, t] = policy.log_probs(state)[live, y[live]]
    return out


def sequence_log_prob(policy: Policy, rollouts: Rollouts) -> np.ndarray:
    """(N,) log π(y | x) = Σ_t log π(y_t | x, y_<t), over each completion's own pieces."""
    return token_log_probs(policy, rollouts).sum(axis=1)


# -- 5. the reference policy: counting pieces in the frozen rollouts -----------------------------

def fit_reference(vocab: Vocabulary, examples: Sequence[tuple[int, str]], n_problems: int,
                  own_weight: float = 0.9, smoothing: float = 0.02,
                  ) -> tuple[Policy, dict[str, Any]]:
    """The "SFT model": a policy that writes like the frozen snapshot, fitted by counting.

    Each example is (problem index, completion). A completion the vocabulary cannot spell, or
    longer than `T_MAX` pieces, is skipped (and counted). A context c is (previous piece,
    digits in a row); two count tables are mixed:

        pooled(y | c)     = (count(c → y) + smoothing) / (count(c) + V · smoothing)
        π_ref(y | x, c)   = own_weight · own(y | x, c) + (1 - own_weight) · pooled(y | c)

    where `own` counts only problem x's own completion, and is used only where that completion
    passed through c (elsewhere π_ref = pooled). So π_ref mostly repeats what the snapshot
    wrote for x (right answer, slip or format failure alike) and, through the pooled counts and
    the smoothing, can write any piece anywhere: nothing is impossible, only rare.

    Returns the policy (one table indexed by (problem, previous piece, run), holding log π_ref)
    and a report `{used, skipped: [completions]}`.
    """
    v, runs = vocab.size, RUN_MAX + 1
    pooled = np.full((v + 1, runs, v), smoothing)
    own = np.zeros((n_problems, v + 1, runs, v))
    used, skipped = 0, []
    for x, text in examples:
        ids = vocab.encode(text)
        if ids is None or len(ids) > T_MAX:
            skipped.append(text)
            continue
        used += 1
        state = State.start(np.array([x]))
        for y in ids:
            c = (state.prev[0] + 1, state.run[0])
            pooled[(*c, y)] += 1
            own[(x, *c, y)] += 1
            state = state.after(np.array([y]), vocab)
    pooled /= pooled.sum(axis=-1, keepdims=True)
    seen = own.sum(axis=-1, keepdims=True)
    own_probs = np.divide(own, seen, out=np.zeros_like(own), where=seen > 0)
    mix = np.where(seen > 0, own_weight * own_probs + (1 - own_weight) * pooled, pooled)
    table = log_softmax(np.log(mix).reshape(n_problems * (v + 1) * runs, v))
    reference = Policy(vocab, (by_problem_previous_and_run(v),), [table], normalised=True)
    return reference, {"used": used, "skipped": skipped}


def learner_for(reference: Policy, n_problems: int, n_trained: int | None = None) -> Policy:
    """A learner that starts exactly at `reference` and moves it through two tables: one shared
    by all problems (the format), one per problem and digit run (the answer). `n_trained`: how
    many of the problems train it (all by default), the prompts whose pull the shared rows
    receive."""
    v = reference.vocab.size
    tables = [np.zeros((v + 1, v)), np.zeros((n_problems * (RUN_MAX + 1), v))]
    return Policy(reference.vocab, (by_previous_piece, by_problem_and_run), tables, reference,
                  reference.t_max, shared_by=(n_trained or n_problems, 1))


# -- 6. every sequence, for tiny instances --------------------------------------------------------

def all_sequences(vocab: Vocabulary, t_max: int) -> list[tuple[int, ...]]:
    """Every completion a policy can write: ended by `<eos>` within `t_max` pieces, or cut at
    `t_max` without one. Their probabilities sum to 1 (tests check it)."""
    body = range(1, vocab.size)
    ended = [(*head, 0) for n in range(t_max) for head in product(body, repeat=n)]
    return ended + list(product(body, repeat=t_max))


def rollouts_of(sequences: Sequence[Sequence[int]], x: int, t_max: int) -> Rollouts:
    """Given sequences as `Rollouts` for problem x (padded with -1), to score or weigh them."""
    ids = np.full((len(sequences), t_max), -1)
    for row, seq in zip(ids, sequences, strict=True):
        row[:len(seq)] = seq
    return Rollouts(np.full(len(sequences), x), ids)


def exact_distribution(policy: Policy, x: int) -> tuple[list[tuple[int, ...]], np.ndarray]:
    """Every sequence for problem x and its probability under `policy` (tiny instances)."""
    sequences = all_sequences(policy.vocab, policy.t_max)
    return sequences, np.exp(sequence_log_prob(policy, rollouts_of(sequences, x, policy.t_max)))


def entropy_of(probs: np.ndarray) -> float:
    """Shannon entropy in nats of a probability vector (0 log 0 = 0)."""
    p = probs[probs > 0]
    return float(-(p * np.log(p)).sum())

