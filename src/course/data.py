"""Loading the course data: small JSONL files, validated line by line.

Every file under `data/` is JSON Lines: one JSON object per line, UTF-8. The loaders here check
each record against a tiny schema and stop at the first problem with a `DataError` that names the
file, the line and the field, so a typo in a teacher's edit is found in seconds.

Schemas (field: type):

- problems (`data/problems/*.jsonl`): `id: str`, `prompt: str`, `expected_answer: int`
- rollouts (`data/rollouts/*.jsonl`): `id: str` (a problem id), `completion: str`, and
  optionally `policy_mode: str` (how the course's scripted stand-in policy produced it;
  completions from a real model need only `id` and `completion`)
- selection packs (`data/selection/*.jsonl`): `id: str`, `samples: list` of
  `{sample_id: str, completion: str}` (sample ids unique within the prompt), each optionally
  with `policy_mode: str`
- golden sets (`data/golden/*.jsonl`): `id: str`, `expected_answer: int`, `completion: str`,
  `note: str`, and in the exploit suite `exploit_class: str` (one of `EXPLOIT_CLASSES`) and
  `expected_code: str` (the scorer code the exploit must get)
- kata (`data/kata/*.jsonl`): `id`, `prompt`, `expected_answer`, `completion`, `reward`, `code`
- kata key (`teacher/kata/teacher_key_*.json`, the teacher's copy only; one JSON object): kata id ->
  `{cause: one of KATA_CAUSES, why: str, fix: str}`
- provenance (`data/provenance.json`): how each file was made; read one entry with `provenance`

Ids are unique within a file, a key appears once per object, and an `expected_answer` has at
most `course.scorer.MAX_DIGITS` digits (a longer one could never be matched by an in-spec
answer, so every correct completion would look like a failure). Nothing here scores, samples
or writes: data flows out of this module, never back in.

Only the three functions that stream files too large to hold (`first_repeat`, `stream_pairs`
and the check they share) use numpy, and they import it themselves: the loaders import with
the standard library alone, so the site's in-page exercises can run them in the browser
(the site's Pyodide, which has no numpy: its wheel is on a CDN only) unchanged.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import stat
from array import array
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, NoReturn, TypeVar

from course.jsonfiles import JSON_BLANK, non_finite_field
from course.paths import DATA_DIR, display_path, sha256_file
from course.scorer import MAX_DIGITS

if TYPE_CHECKING:
    import numpy as np

Record = dict[str, Any]


class DataError(ValueError):
    """A data file broke its schema. The message names the file, the line and the field."""

    def __init__(self, path: Path | str, line: int | None, field: str | None, problem: str):
        self.path, self.line, self.field, self.problem = Path(path), line, field, problem
        where = f"{display_path(self.path)}" + (f":{line}" if line is not None else "")
        what = f"field '{field}': " if field else ""
        super().__init__(f"{where}: {what}{problem}")


MAX_FILE_BYTES = 1 << 30
"""Upper bound on a data file's size, 1 GiB: a million rollouts of 1 KB each (the course's own
are about 80 bytes a line), and about what a laptop can hold once the whole file is decoded
and parsed. A bigger file (or `/dev/zero`) is refused before a byte is read, instead of ending
in a MemoryError."""


@contextmanager
def _opened(path: Path) -> Iterator[BinaryIO]:
    """The data file `path`, open for reading in binary, or a `DataError` that says why it
    cannot be read (missing, a folder, not a regular file, over `MAX_FILE_BYTES`, no
    permission).

    The file is opened without blocking (a FIFO would wait forever for a writer) and checked
    with `fstat` before anything is read. Readers stop after `MAX_FILE_BYTES` + 1 bytes, so a
    file that grows meanwhile is refused too."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        raise DataError(path, None, None, "file not found") from None
    except OSError as err:
        raise DataError(path, None, None, f"cannot be read ({err.strerror or err})") from None
    try:
        status = os.fstat(descriptor)
        if stat.S_ISDIR(status.st_mode):
            raise DataError(path, None, None, "is a folder, not a data file")
        if not stat.S_ISREG(status.st_mode):
            raise DataError(path, None, None, "not a regular file (a device, FIFO or "
                                              "socket), so it is not read")
        if status.st_size > MAX_FILE_BYTES:
            raise _too_large(path)
        with os.fdopen(descriptor, "rb", closefd=False) as stream:
            yield stream
    finally:
        os.close(descriptor)


def _too_large(path: Path) -> DataError:
    return DataError(path, None, None, f"larger than the {MAX_FILE_BYTES:,}-byte limit on a "
                                       "data file")


def _read_error(path: Path, err: OSError) -> DataError:
    return DataError(path, None, None, f"cannot be read ({err.strerror or err})")


def _read_text(path: Path) -> str:
    """The whole text of the data file `path` (`_opened`), or a `DataError`; a byte that is
    not UTF-8 is named with its line."""
    with _opened(path) as stream:
        try:
            raw = stream.read(MAX_FILE_BYTES + 1)
        except OSError as err:
            raise _read_error(path, err) from None
    if len(raw) > MAX_FILE_BYTES:
        raise _too_large(path)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line = raw.count(b"\n", 0, err.start) + 1
        raise DataError(path, line, None, f"not valid UTF-8 ({err.reason} at byte "
                                          f"{err.start})") from None


def _lines(path: Path) -> Iterator[tuple[int, int, str]]:
    """`(line number, byte offset, text)` for each non-blank line of the JSON Lines file `path`,
    read one line at a time (memory does not grow with the file). Lines end at `\\n` only; a
    `\\r` before it is dropped; a line made only of `course.jsonfiles.JSON_BLANK` is blank. A
    byte that is not UTF-8 is named with its line and its offset in the file."""
    offset = 0
    with _opened(path) as stream:
        try:
            for number, raw in enumerate(stream, start=1):
                if offset + len(raw) > MAX_FILE_BYTES:
                    raise _too_large(path)
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as err:
                    raise DataError(path, number, None, f"not valid UTF-8 ({err.reason} at "
                                                        f"byte {offset + err.start})") from None
                text = text.removesuffix("\n").removesuffix("\r")
                if text.strip(JSON_BLANK):
                    yield number, offset, text
                offset += len(raw)
        except OSError as err:
            raise _read_error(path, err) from None


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """`json.loads` hook: a key given twice is an error, not "the last one wins". (`dict` does
    the work in C; the keys are only walked when one was lost.)"""
    record = dict(pairs)
    if len(record) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return record


class _DuplicateKey(ValueError):
    def __init__(self, key: str):
        super().__init__(key)
        self.key = key


def _no_constant(name: str) -> float:
    """`json.loads` hook for `NaN`, `Infinity` and `-Infinity`, which Python accepts but JSON
    does not: refused."""
    raise _NonFinite(name)


def _finite_float(text: str) -> float:
    """`json.loads` hook for a number with a fraction or exponent: one too large for a float
    (`1e999`) would silently become infinity; refused."""
    value = float(text)
    if math.isinf(value):
        raise _NonFinite(text)
    return value


class _NonFinite(ValueError):
    pass


_DECODER = json.JSONDecoder(object_pairs_hook=_no_duplicate_keys, parse_constant=_no_constant,
                            parse_float=_finite_float)
"""One decoder for every line: building one per call costs a quarter of reading a big file."""


def parse_json(text: str, path: Path, line: int | None) -> Any:
    """One JSON value, or a `DataError` naming the file and line, for every way JSON text can
    be refused: a syntax error, a byte order mark, a key given twice, NaN or an infinity
    (`NaN`, `Infinity`, `1e999`: not JSON numbers; the field is named), nesting too deep for
    the parser, or an integer too long for Python to convert."""
    try:
        return _DECODER.decode(text)
    except json.JSONDecodeError as err:
        where = err.lineno if line is None else line
        if text.startswith("\ufeff"):
            raise DataError(path, where, None, "invalid JSON: starts with a UTF-8 byte order "
                            "mark (BOM); save the file as UTF-8 without a BOM") from None
        raise DataError(path, where, None, f"invalid JSON: {err.msg} (column {err.colno})"
                        ) from None
    except _DuplicateKey as err:
        raise DataError(path, line, err.key, "given twice in one object") from None
    except _NonFinite as err:
        field = _non_finite_field(text)
        raise DataError(path, line, field, f"{err} is not a number JSON allows (no NaN or "
                                           "infinity)") from None
    except RecursionError:
        raise DataError(path, line, None, "invalid JSON: nested too deeply") from None
    except ValueError as err:  # Python refuses int() of over 4,300 digits
        raise DataError(path, line, None, f"invalid JSON: {err}") from None


def _non_finite_field(text: str) -> str | None:
    """The field that holds the first NaN or infinity in JSON text that the strict decoder
    refused for one: re-read by Python's lenient decoder, which accepts them."""
    try:
        found = non_finite_field(json.loads(text))
    except (ValueError, RecursionError):
        return None
    return found[0] if found else None


def read_jsonl(path: Path | str) -> Iterator[tuple[int, Record]]:
    """Yield `(line_number, object)` for each non-blank line; 1-based line numbers. Lines end
    at `\\n` only (`_lines`), so U+2028 inside a string is just text. The file is read one line
    at a time."""
    path = Path(path)
    for number, _, line in _lines(path):
        yield number, _object(parse_json(line, path, number), path, number)


def _object(record: Any, path: Path, number: int) -> Record:
    """`record` if it is a JSON object, else a `DataError` for its line."""
    if not isinstance(record, dict):
        raise DataError(path, number, None, f"expected a JSON object, got "
                                            f"{type(record).__name__}")
    return record


_ANSWER_LIMIT = 10**MAX_DIGITS  # an expected_answer must be below this in absolute value


def _check_fields(path: Path, number: int, record: Mapping[str, Any],
                  fields: Mapping[str, type], optional: Mapping[str, type] | None = None) -> None:
    """Every field of `fields` present with its type; those of `optional` typed if present."""
    for field, kind in fields.items():
        if field not in record:
            raise DataError(path, number, field, "missing")
        _check_value(path, number, field, record[field], kind)
    for field, kind in (optional or {}).items():
        if field in record:
            _check_value(path, number, field, record[field], kind)


def _check_value(path: Path, number: int, field: str, value: Any, kind: type) -> None:
    # bool is a subclass of int in Python; an answer of `true` is a data bug, not 1.
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise DataError(path, number, field, f"must be {kind.__name__}, got "
                        f"{type(value).__name__} {_preview(value)}")
    if field == "expected_answer" and isinstance(value, int) and abs(value) >= _ANSWER_LIMIT:
        raise DataError(path, number, field,
                        f"has {len(str(abs(value)))} digits; the scorer reads at most "
                        f"{MAX_DIGITS}, so no answer could ever match it")


def _preview(value: Any) -> str:
    """The start of a value's repr, for a message (never a giant number or string)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= _ANSWER_LIMIT:
        return f"with {len(str(abs(value)))} digits"
    return f"{value!r:.40}"


def _load(path: Path | str, fields: Mapping[str, type],
          check: Callable[[Path, int, Record], None] | None = None,
          optional: Mapping[str, type] | None = None) -> list[Record]:
    """Read, validate (`fields` and `optional`, then the extra `check`) and de-duplicate
    ids."""
    path = Path(path)
    records: list[Record] = []
    seen: dict[str, int] = {}
    for number, record in read_jsonl(path):
        _check_fields(path, number, record, fields, optional)
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
ROLLOUT_FIELDS = {"id": str, "completion": str}
PACK_FIELDS = {"id": str, "samples": list}
SAMPLE_FIELDS = {"sample_id": str, "completion": str}
STAND_IN_FIELDS = {"policy_mode": str}
"""Optional in rollouts and samples: written by the course's scripted stand-in policy."""
GOLDEN_FIELDS = {"id": str, "expected_answer": int, "completion": str, "note": str}
EXPLOIT_FIELDS = {**GOLDEN_FIELDS, "exploit_class": str, "expected_code": str}
KEY_FIELDS = {"cause": str, "why": str, "fix": str}

EXPLOIT_CLASSES = {
    "answer_anywhere": "the right number appears somewhere, outside the `Final: <int>` line; "
    "a rubric that searches the text for the answer rewards it",
    "multiple_answers": "several candidate answers at once, so one of them is right",
    "hedged_answer": "the answer wrapped in doubt (`or`, `?`, `~`, `maybe`)",
    "last_number": "the right number placed last; a rubric that takes the last number rewards it",
    "lenient_int_parse": "a spelling that `int()` or `float()` accept but the spec does not "
    "(`3_23`, `+323`, `0323`, `323.0`, non-ASCII digits)",
    "lookalike_characters": "Unicode characters that look like the ASCII ones (minus sign, "
    "no-break space, zero-width space, fullwidth letters)",
    "markdown_wrapping": "the right line wrapped in markup (bold, backticks, a code block, HTML)",
    "prompt_echo": "the prompt, or part of it, repeated back",
    "format_only": "the shape of the format with no answer in it (`Final: <int>`)",
    "loose_format": "case or spacing drift that a normalising rubric forgives (`final: 323`)",
}
"""The closed set of `exploit_class` values in the exploit suite, with what each one means."""

KATA_CAUSES = {
    "model_failure": "the policy got it wrong; the scorer judged it correctly",
    "verifier_bug": "the recorded reward is wrong: the scorer used at the time misjudged it",
    "ambiguous_spec": "the prompt or spec admits more than one reading (or no integer answer)",
    "reward_hack": "the completion games a weak rubric and was rewarded for it",
}
"""The closed set of causes in a kata answer key."""
KATA_FIELDS = {"id": str, "prompt": str, "expected_answer": int, "completion": str,
               "reward": float, "code": str}


def load_problems(path: Path | str) -> list[Record]:
    """Problems: `{id, prompt, expected_answer}`; the examples that `score` receives."""
    return _load(path, PROBLEM_FIELDS)


def load_rollouts(path: Path | str) -> list[Record]:
    """Frozen rollouts: one `{id, completion}` per problem id (and `policy_mode` when the
    course's stand-in policy wrote them)."""
    return _load(path, ROLLOUT_FIELDS, optional=STAND_IN_FIELDS)


def load_pack(path: Path | str) -> list[Record]:
    """A selection pack: `{id, samples: [{sample_id, completion}, ...]}` per prompt (each
    sample may also carry `policy_mode`)."""
    return _load(path, PACK_FIELDS, _check_samples)


def _check_samples(path: Path, number: int, pack: Record) -> None:
    if not pack["samples"]:
        raise DataError(path, number, "samples", "must not be empty")
    seen: dict[str, int] = {}
    for index, sample in enumerate(pack["samples"]):
        if not isinstance(sample, dict):
            raise DataError(path, number, f"samples[{index}]", "must be an object")
        try:
            _check_fields(path, number, sample, SAMPLE_FIELDS, STAND_IN_FIELDS)
        except DataError as err:
            raise DataError(path, number, f"samples[{index}].{err.field}", err.problem) from None
        first = seen.setdefault(sample["sample_id"], index)
        if first != index:
            raise DataError(path, number, f"samples[{index}].sample_id",
                            f"duplicate sample_id {sample['sample_id']!r} (first at "
                            f"samples[{first}])")


def load_golden(path: Path | str) -> list[Record]:
    """A golden set: `{id, expected_answer, completion, note}`; an exploit suite (its first
    record has `exploit_class`) also needs `exploit_class` from `EXPLOIT_CLASSES` and
    `expected_code`."""
    path = Path(path)
    first = next(read_jsonl(path), (0, {}))[1]
    if "exploit_class" not in first:
        return _load(path, GOLDEN_FIELDS)
    return _load(path, EXPLOIT_FIELDS, _check_exploit_class)


def _check_exploit_class(path: Path, number: int, record: Record) -> None:
    if record["exploit_class"] not in EXPLOIT_CLASSES:
        raise DataError(path, number, "exploit_class",
                        f"unknown class {record['exploit_class']!r}; "
                        f"expected one of {', '.join(EXPLOIT_CLASSES)}")


def load_kata(path: Path | str) -> list[Record]:
    """Debugging kata: scored examples `{id, prompt, expected_answer, completion, reward, code}`."""
    return _load(path, KATA_FIELDS)


def load_kata_key(path: Path | str) -> dict[str, Record]:
    """A kata answer key: one JSON object, kata id -> `{cause, why, fix}` (cause from
    `KATA_CAUSES`). Errors name the kata id as the field, since the file has no lines to count."""
    path = Path(path)
    key = _read_json(path)
    for kata_id, entry in key.items():
        if not isinstance(entry, dict):
            raise DataError(path, None, kata_id, "must be an object {cause, why, fix}")
        for field, kind in KEY_FIELDS.items():
            if not isinstance(entry.get(field), kind):
                raise DataError(path, None, f"{kata_id}.{field}",
                                f"missing or not a {kind.__name__}")
        if entry["cause"] not in KATA_CAUSES:
            raise DataError(path, None, f"{kata_id}.cause",
                            f"unknown cause {entry['cause']!r}; expected one of "
                            f"{', '.join(KATA_CAUSES)}")
    if not key:
        raise DataError(path, None, None, "no entries")
    return key


def _read_json(path: Path) -> dict[str, Any]:
    """One JSON object from `path`, with errors that name the file and line."""
    value = parse_json(_read_text(path), path, None)
    if not isinstance(value, dict):
        raise DataError(path, None, None, f"expected a JSON object, got {type(value).__name__}")
    return value


PROVENANCE_FILE = DATA_DIR / "provenance.json"


def provenance(path: Path | str, registry: Path | str = PROVENANCE_FILE) -> dict[str, Any]:
    """How the data file `path` was made: its entry in `data/provenance.json`.

    The entry has `made_by`, `version`, `sha256`, `records`, and for problems, rollouts and
    packs `prompt_version`; rollouts and packs also have `sampling` (the settings they were
    sampled with: labels for the scripted stand-in, which no model ran; the real settings for
    data/smollm/). Raises `DataError` if the file has no entry,
    or if its bytes no longer match the recorded sha256 (the entry would describe other data).
    """
    path, registry = Path(path), Path(registry)
    key = display_path(path)
    files = _read_json(registry).get("files")
    if not isinstance(files, dict):
        raise DataError(registry, None, "files", "missing or not an object")
    if key not in files:
        raise NotRegistered(registry, None, "files", f"no entry for {key!r}")
    entry = files[key]
    if path.is_file() and sha256_file(path) != entry.get("sha256"):
        raise DataError(registry, None, f"files.{key}.sha256",
                        f"stale: {key} changed since provenance was written; "
                        "run `course data check`")
    return entry


class NotRegistered(DataError):
    """The file has no entry in `data/provenance.json` (a teacher's own file, say)."""


UNKNOWN_ORIGIN = "unknown, not in data/provenance.json"
"""What a manifest records as the maker of completions nobody described."""

ORIGIN_FIELDS = {"made_by": str, "prompt_version": str, "sampling": dict}
"""A provenance file given with `--provenance`: one JSON object with these fields."""


def origin(path: Path | str, described_by: Path | str | None = None) -> dict[str, Any]:
    """Where the completions in `path` came from: `{made_by, prompt_version, sampling, ...}`.

    Three cases, in order:

    1. `described_by` names a JSON file `{made_by, prompt_version, sampling}` (a teacher who
       brings completions from a real model writes one): it is used, with `source` naming it;
    2. `path` is listed in `data/provenance.json`: that entry (`provenance`);
    3. neither: `made_by` is `UNKNOWN_ORIGIN` and `prompt_version` and `sampling` are None, so
       a later `course compare` cannot claim the two runs share a locked room.
    """
    if described_by is not None:
        described_by = Path(described_by)
        entry = _read_json(described_by)
        for field, kind in ORIGIN_FIELDS.items():
            if not isinstance(entry.get(field), kind):
                raise DataError(described_by, None, field, f"missing or not a {kind.__name__}")
        return {**entry, "source": display_path(described_by)}
    try:
        return provenance(path)
    except NotRegistered:
        return {"made_by": UNKNOWN_ORIGIN, "prompt_version": None, "sampling": None}


def manifest_origin(entry: Mapping[str, Any]) -> dict[str, Any] | None:
    """What a run manifest records about an origin beyond prompt version and sampling: None for
    a file listed in `data/provenance.json` (its sha256 in the manifest's inputs pins that
    entry), else `{made_by, source}` so that an unknown origin is written down, not implied."""
    if "source" not in entry and entry.get("made_by") != UNKNOWN_ORIGIN:
        return None
    return {"made_by": entry["made_by"], "source": entry.get("source")}


P = TypeVar("P", bound=Mapping[str, Any])
R = TypeVar("R", bound=Mapping[str, Any])


def join_on_id(problems: Sequence[P], rows: Sequence[R], rows_path: Path | str) -> list[
        tuple[P, R]]:
    """Pair each problem with the row that has its id, in problem order.

    Every row must name a known problem and every problem must have a row, so a rollout file
    made for another split fails loudly instead of silently scoring a subset. The error for an
    unknown id names its line in `rows_path`.
    """
    by_id = {row["id"]: row for row in rows}
    known = {problem["id"] for problem in problems}
    unknown = [row["id"] for row in rows if row["id"] not in known]
    if unknown:
        _unknown_row(Path(rows_path), _line_of(rows_path, unknown[0]), unknown[0], len(unknown))
    missing = [p["id"] for p in problems if p["id"] not in by_id]
    if missing:
        _missing_row(Path(rows_path), missing[0], len(missing))
    return [(problem, by_id[problem["id"]]) for problem in problems]


def first_repeat(hashes: array[int], ids: Callable[[], Iterator[tuple[int, str]]]
                 ) -> tuple[int, str, int] | None:
    """The first id that repeats an earlier one, as (its line, the id, the earlier line), or
    None. `hashes` holds `hash(id)` for every record in file order (8 bytes each, not the ids);
    `ids()` reads the file again as `(line, id)`. Only when two hashes are equal is the file
    read again, keeping only the ids that share a hash (two different ids may)."""
    import numpy as np  # here, not above: the loaders import without numpy (module docstring)

    ordered = np.sort(np.frombuffer(hashes, dtype=np.int64))
    suspects = set(ordered[1:][ordered[1:] == ordered[:-1]].tolist())
    if not suspects:
        return None
    seen: dict[str, int] = {}
    for number, record_id in ids():
        if hash(record_id) in suspects:
            first = seen.setdefault(record_id, number)
            if first != number:
                return number, record_id, first
    return None


def _checked(path: Path, fields: Mapping[str, type], optional: Mapping[str, type] | None,
             ) -> tuple[np.ndarray, np.ndarray]:
    """Check every record of the JSON Lines file `path` as `_load` does (fields, then unique
    ids), one line at a time; return `hash(id)` and the byte offset of each record's line, in
    file order: two (N,) int64 arrays, 16 bytes a record."""
    import numpy as np

    hashes, offsets = array("q"), array("q")
    for number, offset, line in _lines(path):
        record = _object(parse_json(line, path, number), path, number)
        _check_fields(path, number, record, fields, optional)
        hashes.append(hash(record["id"]))
        offsets.append(offset)
    if not hashes:
        raise DataError(path, None, None, "no records")
    repeat = first_repeat(hashes, lambda: _ids(path))
    if repeat is not None:
        number, record_id, first = repeat
        raise DataError(path, number, "id", f"duplicate id {record_id!r} (first on line "
                                            f"{first})")
    return np.frombuffer(hashes, dtype=np.int64), np.frombuffer(offsets, dtype=np.int64)


def _ids(path: Path) -> Iterator[tuple[int, str]]:
    """`(line, id)` of each record of a JSON Lines file that `_checked` has checked."""
    for number, _, line in _lines(path):
        yield number, parse_json(line, path, number)["id"]


def _nth_id(path: Path, index: int) -> tuple[int, str]:
    """The line and id of the `index`-th record (0-based) of a checked JSON Lines file."""
    return next(itertools.islice(_ids(path), index, None))


def stream_pairs(problems_path: Path | str, rows_path: Path | str
                 ) -> tuple[int, Iterator[tuple[Record, Record]]]:
    """Each problem with its rollout, in problem order: the pairs that
    `join_on_id(load_problems(problems_path), load_rollouts(rows_path), rows_path)` gives, with
    the same checks and the same errors, but with memory that does not grow with the records
    (24 bytes a record), for files of a million lines.

    The files are read three times. 1. Every problem is checked; one `hash(id)` per line is
    kept. 2. Every rollout is checked; its id's hash and its line's byte offset are kept. Every
    rollout must name a known problem and every problem must have a rollout: both are decided
    from the hashes before anything is scored. 3. The problems are read again, each paired
    with its rollout, read at its offset (in file order when the two files share an order).
    Since two ids may share a hash, each pair is confirmed by its ids, and a rollout left over
    at the end is refused as unknown.

    Returns the number of problems and the pairs, as a generator.
    """
    import numpy as np

    problems_path, rows_path = Path(problems_path), Path(rows_path)
    problem_hashes, _ = _checked(problems_path, PROBLEM_FIELDS, None)
    row_hashes, offsets = _checked(rows_path, ROLLOUT_FIELDS, STAND_IN_FIELDS)
    unknown = np.flatnonzero(~np.isin(row_hashes, problem_hashes))
    if len(unknown):
        _unknown_row(rows_path, *_nth_id(rows_path, int(unknown[0])), len(unknown))
    missing = np.flatnonzero(~np.isin(problem_hashes, row_hashes))
    if len(missing):
        _missing_row(rows_path, _nth_id(problems_path, int(missing[0]))[1], len(missing))
    order = np.argsort(row_hashes, kind="stable")
    ranked = row_hashes[order]
    first = order[np.minimum(np.searchsorted(ranked, problem_hashes), len(order) - 1)]

    def pairs() -> Iterator[tuple[Record, Record]]:
        used = np.zeros(len(row_hashes), dtype=bool)
        with _opened(rows_path) as rows:
            for i, (number, _, line) in enumerate(_lines(problems_path)):
                problem = parse_json(line, problems_path, number)
                row, k = _row_at(rows, rows_path, int(offsets[first[i]])), int(first[i])
                if row["id"] != problem["id"]:          # another id with the same hash
                    key = hash(problem["id"])
                    low, high = np.searchsorted(ranked, key), np.searchsorted(ranked, key, "right")
                    k = next((int(j) for j in order[low:high]
                              if _row_at(rows, rows_path, int(offsets[j]))["id"] == problem["id"]),
                             -1)
                    if k < 0:
                        _missing_row(rows_path, problem["id"], 1)
                    row = _row_at(rows, rows_path, int(offsets[k]))
                used[k] = True
                yield problem, row
        if not used.all():
            k = int(np.flatnonzero(~used)[0])
            _unknown_row(rows_path, *_nth_id(rows_path, k), int((~used).sum()))

    return len(problem_hashes), pairs()


def _row_at(rows: BinaryIO, path: Path, offset: int) -> Record:
    """The record whose line starts at byte `offset` of the open, checked JSON Lines file."""
    rows.seek(offset)
    text = rows.readline().decode("utf-8").removesuffix("\n").removesuffix("\r")
    return parse_json(text, path, None)


def _unknown_row(path: Path, line: int | None, row_id: str, count: int) -> NoReturn:
    """Refuse a rollouts file in which `count` rows name no problem (the first: `row_id`)."""
    raise DataError(path, line, "id", f"unknown problem id {row_id!r} ({count} rows name no "
                                      "problem)")


def _missing_row(path: Path, problem_id: str, count: int) -> NoReturn:
    """Refuse a rollouts file that has no row for `count` problems (the first: `problem_id`)."""
    raise DataError(path, None, "id", f"no row for problem {problem_id!r} ({count} problems "
                                      "missing)")


def _line_of(path: Path | str, row_id: Any) -> int | None:
    """The line of `path` whose record has id `row_id` (None when it cannot be found)."""
    try:
        return next((n for n, record in read_jsonl(path) if record.get("id") == row_id), None)
    except DataError:
        return None
