"""Loading the course data: small JSONL files, validated line by line.

Every file under `data/` is JSON Lines: one JSON object per line, UTF-8. The loaders here check
each record against a tiny schema and stop at the first problem with a `DataError` that names the
file, the line and the field, so a typo in a teacher's edit is found in seconds.

Schemas (field: type):

- problems (`data/problems/*.jsonl`): `id: str`, `prompt: str`, `expected_answer: int`
- rollouts (`data/rollouts/*.jsonl`): `id: str` (a problem id), `completion: str`,
  `policy_mode: str` (how the scripted stand-in policy produced it)
- selection packs (`data/selection/*.jsonl`): `id: str`, `samples: list` of
  `{sample_id: str, completion: str, policy_mode: str}`
- golden sets (`data/golden/*.jsonl`): `id: str`, `expected_answer: int`, `completion: str`,
  `note: str`, and in the exploit suite `exploit_class: str`
- kata (`data/kata/*.jsonl`): `id`, `prompt`, `expected_answer`, `completion`, `reward`, `code`

Ids are unique within a file. Nothing here scores, samples or writes: data flows out of this
module, never back in.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

Record = dict[str, Any]

REPO_ROOT = Path(__file__).resolve().parents[2]
DATA_DIR = REPO_ROOT / "data"


class DataError(ValueError):
    """A data file broke its schema. The message names the file, the line and the field."""

    def __init__(self, path: Path | str, line: int | None, field: str | None, problem: str):
        self.path, self.line, self.field, self.problem = Path(path), line, field, problem
        where = f"{display_path(self.path)}" + (f":{line}" if line is not None else "")
        what = f"field '{field}': " if field else ""
        super().__init__(f"{where}: {what}{problem}")


def display_path(path: Path) -> str:
    """A path relative to the repository when it is inside it, for short, stable messages."""
    try:
        return Path(path).resolve().relative_to(REPO_ROOT).as_posix()
    except ValueError:
        return str(path)


def sha256_file(path: Path | str) -> str:
    """Hex sha256 of a file's bytes: the identity of a dataset version in every manifest."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def read_jsonl(path: Path | str) -> Iterator[tuple[int, Record]]:
    """Yield `(line_number, object)` for each non-blank line; 1-based line numbers."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DataError(path, None, None, "file not found") from None
    except UnicodeDecodeError as err:
        raise DataError(path, None, None, f"not valid UTF-8 ({err.reason})") from None
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as err:
            problem = f"invalid JSON: {err.msg} (column {err.colno})"
            raise DataError(path, number, None, problem) from None
        if not isinstance(record, dict):
            problem = f"expected a JSON object, got {type(record).__name__}"
            raise DataError(path, number, None, problem)
        yield number, record


def _check_fields(path: Path, number: int, record: Mapping[str, Any],
                  fields: Mapping[str, type]) -> None:
    for field, kind in fields.items():
        if field not in record:
            raise DataError(path, number, field, "missing")
        value = record[field]
        # bool is a subclass of int in Python; an answer of `true` is a data bug, not 1.
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise DataError(path, number, field,
                            f"must be {kind.__name__}, got {type(value).__name__} {value!r:.40}")


def _load(path: Path | str, fields: Mapping[str, type],
          check: Callable[[Path, int, Record], None] | None = None) -> list[Record]:
    """Read, validate (`fields`, then the optional extra `check`) and de-duplicate ids."""
    path = Path(path)
    records: list[Record] = []
    seen: dict[str, int] = {}
    for number, record in read_jsonl(path):
        _check_fields(path, number, record, fields)
        if check:
            check(path, number, record)
        if "id" in fields:
            first = seen.setdefault(record["id"], number)
            if first != number:
                raise DataError(path, number, "id",
                                f"duplicate id {record['id']!r} (first on line {first})")
        records.append(record)
    if not records:
        raise DataError(path, None, None, "no records")
    return records


PROBLEM_FIELDS = {"id": str, "prompt": str, "expected_answer": int}
ROLLOUT_FIELDS = {"id": str, "completion": str, "policy_mode": str}
PACK_FIELDS = {"id": str, "samples": list}
SAMPLE_FIELDS = {"sample_id": str, "completion": str, "policy_mode": str}
GOLDEN_FIELDS = {"id": str, "expected_answer": int, "completion": str, "note": str}
EXPLOIT_FIELDS = {**GOLDEN_FIELDS, "exploit_class": str}
KATA_FIELDS = {"id": str, "prompt": str, "expected_answer": int, "completion": str,
               "reward": float, "code": str}


def load_problems(path: Path | str) -> list[Record]:
    """Problems: `{id, prompt, expected_answer}`; the examples that `score` receives."""
    return _load(path, PROBLEM_FIELDS)


def load_rollouts(path: Path | str) -> list[Record]:
    """Frozen rollouts: one `{id, completion, policy_mode}` per problem id."""
    return _load(path, ROLLOUT_FIELDS)


def load_pack(path: Path | str) -> list[Record]:
    """A selection pack: `{id, samples: [{sample_id, completion, policy_mode}, ...]}` per prompt."""
    return _load(path, PACK_FIELDS, _check_samples)


def _check_samples(path: Path, number: int, pack: Record) -> None:
    if not pack["samples"]:
        raise DataError(path, number, "samples", "must not be empty")
    for index, sample in enumerate(pack["samples"]):
        if not isinstance(sample, dict):
            raise DataError(path, number, f"samples[{index}]", "must be an object")
        try:
            _check_fields(path, number, sample, SAMPLE_FIELDS)
        except DataError as err:
            raise DataError(path, number, f"samples[{index}].{err.field}", err.problem) from None


def load_golden(path: Path | str) -> list[Record]:
    """A golden set: `{id, expected_answer, completion, note}` (+ `exploit_class` for exploits)."""
    path = Path(path)
    first = next(read_jsonl(path), (0, {}))[1]
    return _load(path, EXPLOIT_FIELDS if "exploit_class" in first else GOLDEN_FIELDS)


def load_kata(path: Path | str) -> list[Record]:
    """Debugging kata: scored examples `{id, prompt, expected_answer, completion, reward, code}`."""
    return _load(path, KATA_FIELDS)


def join_on_id(problems: list[Record], rows: list[Record], rows_path: Path | str) -> list[
        tuple[Record, Record]]:
    """Pair each problem with the row that has its id, in problem order.

    Every row must name a known problem and every problem must have a row, so a rollout file
    made for another split fails loudly instead of silently scoring a subset.
    """
    by_id = {row["id"]: row for row in rows}
    unknown = [row["id"] for row in rows if row["id"] not in {p["id"] for p in problems}]
    if unknown:
        raise DataError(rows_path, None, "id", f"unknown problem id {unknown[0]!r}"
                        f" ({len(unknown)} rows name no problem)")
    missing = [p["id"] for p in problems if p["id"] not in by_id]
    if missing:
        raise DataError(rows_path, None, "id", f"no row for problem {missing[0]!r}"
                        f" ({len(missing)} problems missing)")
    return [(problem, by_id[problem["id"]]) for problem in problems]
