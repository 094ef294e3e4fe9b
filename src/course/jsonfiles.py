"""The course's JSON layouts, so every file it writes has exactly one possible form.

- `json_bytes`: one object per file (manifests, summaries, provenance), indented for review;
- `jsonl_bytes`: JSON Lines written by runs (results), one compact object per line, any
  character stored as itself;
- `ascii_jsonl_bytes`: JSON Lines written under `data/` (problems, rollouts, packs), where
  every non-ASCII character is escaped (`\\u00a0`), so an invisible one shows in a review.

All are UTF-8 with a final newline, keys in insertion order, so the same data always gives
the same bytes: that is what lets `course runs verify` and `course data check` compare files
byte for byte. A lone surrogate (`"\\ud800"`, legal in a JSON string and in a Python `str`,
but not encodable as UTF-8) is written as its JSON escape, so any string a completion can hold
is written and reads back unchanged.

Reading JSON Lines: `jsonl_lines` splits on `\\n` only. `str.splitlines()` would also split
on U+2028, U+2029, U+0085 and a few control characters, which `ensure_ascii=False` writes raw
inside strings: a file that holds them would fall apart into invalid half-lines.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any


def _utf8(text: str) -> bytes:
    """UTF-8 bytes of JSON text; a lone surrogate becomes its escape `\\udXXX`, which is
    exactly how JSON spells it (it can only occur inside a JSON string)."""
    return text.encode("utf-8", errors="backslashreplace")


def json_bytes(obj: Any) -> bytes:
    """The one JSON layout for artifacts: 2-space indent, UTF-8, keys in insertion order."""
    return _utf8(json.dumps(obj, indent=2, ensure_ascii=False) + "\n")


_JSONL_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def jsonl_bytes(records: Sequence[Mapping[str, Any]]) -> bytes:
    """One compact JSON object per line, UTF-8, with a final newline.

    One shared encoder (the same bytes as `json.dumps(record, ensure_ascii=False,
    separators=(",", ":"))`), because building an encoder per line is a fifth of the cost of
    writing a 100k-example run."""
    encode = _JSONL_ENCODER.encode
    return _utf8("".join([encode(record) + "\n" for record in records]))


def ascii_jsonl_bytes(records: Sequence[Mapping[str, Any]]) -> bytes:
    """The data files' layout: one `json.dumps` object per line (ASCII, so invisible
    characters show as `\\u00a0`-style escapes), final newline."""
    return "".join(json.dumps(record) + "\n" for record in records).encode("ascii")


def jsonl_lines(text: str) -> list[tuple[int, str]]:
    """`(line_number, line)` for each non-blank line of JSON Lines text, 1-based, split on
    `\\n` only (a `\\r` before it is dropped, for files saved on Windows)."""
    return [(number, line.removesuffix("\r"))
            for number, line in enumerate(text.split("\n"), start=1) if line.strip()]
