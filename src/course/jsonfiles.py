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

None writes NaN or an infinity: JSON has no spelling for them (Python's `NaN` and `Infinity`
are not standard JSON, and other readers refuse them). A non-finite number raises
`NonFiniteNumber`, naming its field, while the bytes are built; a run's writer builds every
file's bytes before it writes any, so nothing is written. (`course.data.parse_json` refuses
them on reading, in the same way.)

Reading JSON Lines: `jsonl_lines` splits on `\\n` only. `str.splitlines()` would also split
on U+2028, U+2029, U+0085 and a few control characters, which `ensure_ascii=False` writes raw
inside strings: a file that holds them would fall apart into invalid half-lines. A line is
blank, and skipped, only when it holds nothing but JSON's own whitespace (`JSON_BLANK`: space,
tab, carriage return); a line of any other whitespace (U+00A0, U+3000, a form feed) is not
JSON, so it is parsed and refused with its line number, never skipped in silence. The site's
reader (`src/course_site/run_pages.py`, `read_jsonl`) follows the same rule.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any


class NonFiniteNumber(ValueError):
    """A NaN or an infinity was about to be written to a JSON file; the message names the field
    (`final.kl`, `[3].reward`) and says where such a number comes from."""

    def __init__(self, field: str, value: float):
        self.field, self.value = field, value
        super().__init__(f"field '{field}' is {value}, and JSON has no NaN or infinity; "
                         "nothing was saved (a value diverged, or an input held one)")


def non_finite_field(obj: Any) -> tuple[str, float] | None:
    """`(field, value)` of the first NaN or infinity in `obj` (dicts in key order, then lists
    in order; the field is spelt `a.b[2].c`), or None when every number is finite. Iterative,
    so any nesting depth a parser accepted can be searched."""
    stack: list[tuple[str, Any]] = [("", obj)]
    while stack:
        field, value = stack.pop()
        if isinstance(value, float) and not math.isfinite(value):
            return field or "(the value itself)", value
        if isinstance(value, Mapping):
            children = [(f"{field}.{key}" if field else str(key), item)
                        for key, item in value.items()]
        elif isinstance(value, (list, tuple)):
            children = [(f"{field}[{index}]", item) for index, item in enumerate(value)]
        else:
            continue
        stack.extend(reversed(children))
    return None


def _finite(encode: Callable[[Any], str], obj: Any) -> str:
    """`encode(obj)` by an encoder made with `allow_nan=False`, its refusal named by field."""
    try:
        return encode(obj)
    except ValueError:
        found = non_finite_field(obj)
        if found is None:
            raise
        raise NonFiniteNumber(*found) from None


def _utf8(text: str) -> bytes:
    """UTF-8 bytes of JSON text; a lone surrogate becomes its escape `\\udXXX`, which is
    exactly how JSON spells it (it can only occur inside a JSON string)."""
    return text.encode("utf-8", errors="backslashreplace")


_JSON_ENCODER = json.JSONEncoder(indent=2, ensure_ascii=False, allow_nan=False)


def json_bytes(obj: Any) -> bytes:
    """The one JSON layout for artifacts: 2-space indent, UTF-8, keys in insertion order; a NaN
    or an infinity raises `NonFiniteNumber`."""
    return _utf8(_finite(_JSON_ENCODER.encode, obj) + "\n")


_JSONL_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def jsonl_bytes(records: Sequence[Mapping[str, Any]]) -> bytes:
    """One compact JSON object per line, UTF-8, with a final newline.

    One shared encoder (the same bytes as `json.dumps(record, ensure_ascii=False,
    separators=(",", ":"))`), because building an encoder per line is a fifth of the cost of
    writing a 100k-example run. A NaN or an infinity raises `NonFiniteNumber`, its field
    spelt from the line's index (`[3].reward`)."""
    encode = _JSONL_ENCODER.encode
    return _utf8(_finite(lambda rows: "".join([encode(row) + "\n" for row in rows]),
                         records))


_ASCII_ENCODER = json.JSONEncoder(allow_nan=False)


def ascii_jsonl_bytes(records: Sequence[Mapping[str, Any]]) -> bytes:
    """The data files' layout: one `json.dumps` object per line (ASCII, so invisible
    characters show as `\\u00a0`-style escapes), final newline; a NaN or an infinity raises
    `NonFiniteNumber`."""
    encode = _ASCII_ENCODER.encode
    return _finite(lambda rows: "".join(encode(row) + "\n" for row in rows),
                   records).encode("ascii")


JSON_BLANK = " \t\r"
"""The characters a blank JSON Lines line may hold: JSON's whitespace (RFC 8259), less the
`\\n` that ends the line. `str.strip()` would also remove U+00A0, U+2028 or U+3000, and so
skip a line that JSON refuses."""


def jsonl_lines(text: str) -> list[tuple[int, str]]:
    """`(line_number, line)` for each non-blank line (one not made only of `JSON_BLANK`) of
    JSON Lines text, 1-based, split on `\\n` only (a `\\r` before it is dropped, for files
    saved on Windows)."""
    return [(number, line.removesuffix("\r"))
            for number, line in enumerate(text.split("\n"), start=1) if line.strip(JSON_BLANK)]
