"""The course's JSON layouts, so every file it writes has exactly one possible form.

- `json_bytes`: one object per file (manifests, summaries, provenance), indented for review;
- `jsonl_bytes`: JSON Lines written by runs (results), one compact object per line, any
  character stored as itself;
- `ascii_jsonl_bytes`: JSON Lines written under `data/` (problems, rollouts, packs), where
  every non-ASCII character is escaped (`\\u00a0`), so an invisible one shows in a review.

All are UTF-8 with a final newline, keys in insertion order, so the same data always gives
the same bytes: that is what lets `course runs verify` and `course data check` compare files
byte for byte.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any


def json_bytes(obj: Any) -> bytes:
    """The one JSON layout for artifacts: 2-space indent, UTF-8, keys in insertion order."""
    return (json.dumps(obj, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


_JSONL_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def jsonl_bytes(records: Sequence[Mapping[str, Any]]) -> bytes:
    """One compact JSON object per line, UTF-8, with a final newline.

    One shared encoder (the same bytes as `json.dumps(record, ensure_ascii=False,
    separators=(",", ":"))`), because building an encoder per line is a fifth of the cost of
    writing a 100k-example run."""
    encode = _JSONL_ENCODER.encode
    return "".join([encode(record) + "\n" for record in records]).encode("utf-8")


def ascii_jsonl_bytes(records: Sequence[Mapping[str, Any]]) -> bytes:
    """The data files' layout: one `json.dumps` object per line (ASCII, so invisible
    characters show as `\\u00a0`-style escapes), final newline."""
    return "".join(json.dumps(record) + "\n" for record in records).encode("ascii")
