"""The Locked Room: reading two saved Loop A runs back, checking they may be compared, and
measuring how far apart they are.

Two runs are compared only inside a "locked room": same dataset, same scorer version, same
prompt version, same sampling settings. Only the policy may differ: it is what a comparison
measures. Anything else is a change of environment, and the comparison is refused with the
differing fields named.

The story, top to bottom:

1. read each run back, totally (`read_manifest`, `read_results`): the manifest must be a JSON
   object with the fields the room needs, of the right types; the run's seal (the sha256 of
   each file, `course.runs.sealed`) must still match its files; each line of `results.jsonl`
   is checked against its schema (an object, `id` a non-empty string unique in the file,
   `reward` a JSON number equal to 0 or 1, the `completion` and `expected_answer` scored) and
   SCORED AGAIN with the scorer version the manifest names (`course.scorers`): a recorded
   reward or code that the scorer does not give is refused, whatever the seal says. Lines are
   read one at a time, both runs side by side, so that memory stays flat however many
   examples there are. Every malformed or
   tampered run gives one `RunError` naming the file, and the line and field where there is
   one (`course compare` prints it and exits with status 2);
2. check the walls (`LOCKED_ROOM`): the same problems (sha256), scorer version, prompt version
   and sampling settings (`_settings`, the policy's name excepted); unknown walls prove nothing
   (`_unknown_walls`);
3. measure the distance: the paired 95% interval of the change in pass rate
   (`paired_difference_interval`, Newcombe's method 10) and the Noise Rule's verdict
   (`noise_verdict`); `compare_runs` puts 1 to 3 together.

The runs are written by `course.reports.evaluation` (`course eval`); a saved comparison by
`course.reports.comparison` (`course compare --out`).
"""

from __future__ import annotations

import json
import math
from array import array
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from itertools import zip_longest
from pathlib import Path
from typing import Any, NamedTuple

from course import data, runs, scorers
from course.evaluation import Z_95, wilson_interval
from course.jsonfiles import JSON_BLANK
from course.paths import REPO_ROOT, display_path, sha256_file

NOISE_MIN_EXAMPLES = 100
NOISE_MIN_POINTS = 5
"""The Noise Rule: on fewer than 100 examples, a change of 5 points or less is treated as luck;
only a change of more than 5 points is large (the course design's "> 5%")."""

LOCKED_ROOM = ("dataset (problems sha256)", "scorer_version", "prompt_version", "sampling")
"""What must be identical before two pass rates may be compared."""

POLICY_KEY = "policy"
"""The one entry of the recorded sampling settings that may differ: the policy's name."""

BLANK = JSON_BLANK.encode() + b"\n"
"""What a blank line of results.jsonl may hold, its `\\n` included (`course.jsonfiles`)."""

MANIFEST = "manifest.json"
RESULTS = "results.jsonl"
"""The two files of an eval run that a comparison reads."""


@dataclass(frozen=True)
class CompareConfig:
    """Two Loop A runs put side by side in the locked room (`compare_runs`), and where the
    comparison is saved."""

    run_a: Path
    """The baseline eval run folder (A)."""
    run_b: Path
    """The changed eval run folder (B); the report is about B - A."""
    out: Path | None = None
    """The comparison run folder the command writes; recorded so the README can print the
    exact command."""


# -- 1. reading a run back, totally -----------------------------------------------------------

def _field(manifest: Mapping[str, Any], file: Path, field: str, kinds: tuple[type, ...],
           what: str) -> Any:
    """`manifest[field]` if it is present and one of `kinds`, else a `RunError` naming it.
    (`bool` is refused where `int` is asked: it is a subclass, not a number.)"""
    if field not in manifest:
        raise runs.file_error(file, None, field, f"missing (expected {what})")
    value = manifest[field]
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        raise runs.file_error(file, None, field, f"must be {what}, got "
                              f"{type(value).__name__}")
    return value


def read_manifest(run: Path) -> dict[str, Any]:
    """The manifest of the eval run `run`, checked for every field the room reads.

    `kind` must be `"eval"` (another kind is refused by name: only Loop A runs are compared);
    `inputs.problems` an object with a string `sha256` (and, if present, a string `path`);
    `scorer_version` a version of the registry (`course.scorers.SCORERS`), so that its results
    can be scored again; `prompt_version` a string or null; `sampling` an object or null;
    `files` (the seal, `course.runs.SEAL`) an object that names `results.jsonl`. The seal must
    still match: the manifest's own fields (`course.runs.FIELDS_SEAL`) and every file it names
    (`course.runs.unsealed`). Raises `RunError` naming the file and the field.
    """
    file = run / MANIFEST
    manifest = runs.read_json(run, MANIFEST)
    kind = _field(manifest, file, "kind", (str,), "a string")
    if kind != "eval":
        raise runs.RunError(f"{display_path(run)} is a {kind!r} run: only Loop A evaluation "
                            "runs (kind 'eval') can be compared or checked")
    inputs = _field(manifest, file, "inputs", (dict,), "an object")
    problems = inputs.get("problems")
    if not isinstance(problems, dict) or not isinstance(problems.get("sha256"), str):
        raise runs.file_error(file, None, "inputs.problems.sha256",
                              "missing or not a string: the run does not record the problems "
                              "file's sha256")
    if not isinstance(problems.get("path", ""), str):
        raise runs.file_error(file, None, "inputs.problems.path", "must be a string")
    version = _field(manifest, file, "scorer_version", (str,), "a string")
    if version not in scorers.SCORERS:
        raise runs.file_error(file, None, "scorer_version", scorers.unknown(version)
                              + ", so its results cannot be scored again")
    _field(manifest, file, "prompt_version", (str, type(None)), "a string or null")
    _field(manifest, file, "sampling", (dict, type(None)), "an object or null")
    seal = _field(manifest, file, runs.SEAL, (dict,), "an object {file name: sha256}")
    if RESULTS not in seal:
        raise runs.file_error(file, None, runs.SEAL, f"does not seal {RESULTS}: the run was "
                              "made before runs recorded their files' sha256, or its manifest "
                              "was edited; evaluate again")
    problems_found = runs.unsealed(run, manifest)
    if problems_found:
        more = len(problems_found) - 1
        raise runs.RunError(problems_found[0] + (f" (and {more} more)" if more else ""))
    return manifest


def _number(value: Any) -> bool:
    """Whether a parsed JSON value is a number: int or float, never bool."""
    return isinstance(value, int | float) and not isinstance(value, bool)


class Result(NamedTuple):
    """One line of a run's results, as the room reads it."""

    line: int
    id: str
    expected_answer: Any
    passed: bool


def read_results(run: Path, version: str) -> Iterator[Result]:
    """Yield a `Result` for each line of the run's `results.jsonl`, in file order, reading
    one line at a time (a line of only spaces, tabs or a `\r` is skipped; lines end at `\n`
    only), each scored again.

    Each line must be a JSON object (`course.runs.decode_json`: UTF-8, no byte order mark, not
    nested too deeply, no integer of over 4,300 digits) with `id` a non-empty string, `reward`
    a JSON number equal to 0 or 1 (`true` and `"1.0"` are not numbers), the `completion` and
    `expected_answer` that were scored and `details.code`. The scorer `version` (the one the
    manifest names, `course.scorers.SCORERS`) scores the completion against the expected
    answer again, and must give the recorded reward and code: a results file rewritten with
    other rewards is refused even when its seal was recomputed. No id may appear twice: that is
    checked when the file has been read, from one 8-byte hash per line
    (`course.data.first_repeat`), so that memory stays flat however long the file. A file with
    no result is refused too. Every problem is a `RunError` naming the file, the line and the
    field.
    """
    file, score = run / RESULTS, scorers.SCORERS[version].score
    hashes = array("q")                              # hash(id) per line: 8 bytes, not the id
    with runs.open_file(run, RESULTS) as stream:
        for number, raw in enumerate(stream, start=1):
            if not raw.strip(BLANK):
                continue
            record = runs.decode_json(raw, file, number)
            if not isinstance(record, dict):
                raise runs.file_error(file, number, None, "expected a JSON object, got "
                                      f"{type(record).__name__}")
            result_id, reward = record.get("id"), record.get("reward")
            if not isinstance(result_id, str) or not result_id:
                raise runs.file_error(file, number, "id", "missing, empty or not a string")
            if "reward" not in record:
                raise runs.file_error(file, number, "reward", "missing")
            if not _number(reward) or reward not in (0, 1):
                shown = (f"a number with {len(str(abs(reward)))} digits"
                         if isinstance(reward, int) and not isinstance(reward, bool)
                         and abs(reward) > 10**40 else f"{type(reward).__name__} {reward!r:.40}")
                raise runs.file_error(file, number, "reward", f"must be the number 0 or 1, "
                                      f"got {shown}")
            _check_score(record, score, version, file, number)
            hashes.append(hash(result_id))
            yield Result(number, result_id, record["expected_answer"], reward == 1)
    if not hashes:
        raise runs.file_error(file, None, None, "no results")
    if (duplicate := data.first_repeat(hashes, lambda: _result_ids(run))) is not None:
        number, result_id, first = duplicate
        raise runs.file_error(file, number, "id", f"duplicate id {result_id!r:.60} "
                              f"(first on line {first})")


def _check_score(record: Mapping[str, Any], score: scorers.Score, version: str, file: Path,
                 number: int) -> None:
    """Refuse the result line `record` unless it holds what was scored (`completion`,
    `expected_answer`) and the reward and code that `score`, the scorer `version`, gives it."""
    for field in ("completion", "expected_answer"):
        if field not in record:
            raise runs.file_error(file, number, field, "missing: a result line keeps what "
                                  "was scored, so that it can be scored again")
    details = record.get("details")
    code = details.get("code") if isinstance(details, dict) else None
    if not isinstance(code, str):
        raise runs.file_error(file, number, "details.code", "missing or not a string")
    scored = score(record, record["completion"])
    now = scored["details"]["code"]
    for field, recorded, again in (("reward", record["reward"], scored["reward"]),
                                   ("details.code", code, now)):
        if recorded != again:
            raise runs.file_error(file, number, field, f"records {recorded!r:.40} but "
                                  f"{version} scores this line's completion {again!r} ({now}): "
                                  "the results were changed after they were scored")


def _result_ids(run: Path) -> Iterator[tuple[int, str]]:
    """`(line, id)` of each result of a run that `read_results` has read through."""
    with runs.open_file(run, RESULTS) as stream:
        for number, raw in enumerate(stream, start=1):
            if raw.strip(BLANK):
                yield number, runs.decode_json(raw, run / RESULTS, number)["id"]


def check_run(run: Path | str, scorer_version: str) -> dict[str, Any]:
    """Check one eval run folder (a student's, say) as `compare_runs` reads each run: its
    manifest's fields and seal (`read_manifest`), its scorer version, which must be
    `scorer_version` (the course's own, unless the checker names another: a run measured by
    another instrument is not a run of this course's), every result line scored again
    (`read_results`); then each line's id and expected answer against the problems file the
    manifest names, which must be here with the sha256 it records (`_recorded_problems`), and
    `summary.json`'s `n` and `passes` against the lines. Returns `{n, passes,
    scorer_version}`; raises `RunError` naming the file, line and field of the first problem
    (`course runs check`)."""
    run = Path(run)
    manifest = read_manifest(run)
    version = manifest["scorer_version"]
    if version != scorer_version:
        raise runs.file_error(run / MANIFEST, None, "scorer_version", f"measured by {version}, "
                              f"not by {scorer_version}, the version it is checked against "
                              f"(name {version} to check the run as it was measured)")
    file, problems = _recorded_problems(run, manifest)
    n = passes = 0
    try:
        for result, problem in zip_longest(read_results(run, version), problems):
            if result is None or problem is None:
                raise runs.file_error(run / RESULTS, None, None, f"holds "
                                      f"{'fewer' if result is None else 'more'} results than "
                                      f"{display_path(file)} has problems")
            number, record = problem
            if (result.id, result.expected_answer) != (record.get("id"),
                                                       record.get("expected_answer")):
                raise runs.file_error(
                    run / RESULTS, result.line, "expected_answer", f"{result.id!r:.60} expects "
                    f"{result.expected_answer!r:.40}, but line {number} of {display_path(file)} "
                    f"is {record.get('id')!r:.60} expecting {record.get('expected_answer')!r:.40}"
                    ": the results were not scored against the problems the run names")
            n, passes = n + 1, passes + result.passed
    except data.DataError as err:
        raise runs.RunError(str(err)) from None
    summary = runs.read_json(run, "summary.json")
    for field, counted in (("n", n), ("passes", passes)):
        if summary.get(field) != counted:
            raise runs.file_error(run / "summary.json", None, field, f"records "
                                  f"{summary.get(field)!r:.40} but the results, scored again, "
                                  f"give {counted}")
    return {"n": n, "passes": passes, "scorer_version": version}


def _recorded_problems(run: Path, manifest: Mapping[str, Any]
                       ) -> tuple[Path, Iterator[tuple[int, data.Record]]]:
    """The problems file that the run's manifest names (`inputs.problems.path`, from the
    repository's root unless absolute) and its records, read one at a time; a `RunError` when
    it is not here with the sha256 the manifest records, since then nobody can say which
    expected answers the run should have been scored against."""
    entry = manifest["inputs"]["problems"]
    file = REPO_ROOT / str(entry.get("path"))
    try:
        found = file.is_file() and sha256_file(file) == entry["sha256"]
    except OSError:
        found = False
    if not found:
        raise runs.file_error(run / MANIFEST, None, "inputs.problems", f"{display_path(file)} "
                              "is not here with the sha256 the run records, so the expected "
                              "answers of its results cannot be checked; check the run where "
                              "its problems file is")
    return file, data.read_jsonl(file)


# -- 2. the walls of the room -----------------------------------------------------------------

def _settings(sampling: Any) -> Any:
    """The sampling wall: the recorded sampling settings without the policy's name. The policy
    is what a comparison measures, so it may change; temperature, top_p, n and seed may not."""
    if not isinstance(sampling, Mapping):
        return sampling
    return {key: value for key, value in sampling.items() if key != POLICY_KEY}


def _policy(manifest: Mapping[str, Any]) -> Any:
    """The policy's name in a manifest's sampling settings (None when not recorded)."""
    sampling = manifest.get("sampling")
    return sampling.get(POLICY_KEY) if isinstance(sampling, Mapping) else None


def _locked_room(manifest: Mapping[str, Any]) -> dict[str, Any]:
    """The locked-room fields of an eval run's manifest (checked by `read_manifest`)."""
    return dict(zip(LOCKED_ROOM, (manifest["inputs"]["problems"]["sha256"],
                                  manifest["scorer_version"], manifest["prompt_version"],
                                  _settings(manifest["sampling"])), strict=True))


def _unknown_walls(room: Mapping[str, Any], where: Path) -> None:
    """Refuse a room whose prompt version or sampling nobody recorded: equal unknowns prove
    nothing about how two sets of completions were made."""
    unknown = [field for field in ("prompt_version", "sampling") if room[field] is None]
    if unknown:
        raise runs.RunError(f"{display_path(where)} records no {' and no '.join(unknown)} "
                            "(its completions have no provenance), so the Locked Room cannot "
                            "be checked; evaluate again with --provenance FILE")


def _problems_path(manifest: Mapping[str, Any]) -> Any:
    """Where a run's problems file was, as its manifest records it (None if not recorded)."""
    return manifest["inputs"]["problems"].get("path")


def _paired_outcomes(run_a: Path, run_b: Path, version: str) -> tuple[Counter[tuple[bool, bool]],
                                                        dict[str, list[str]]]:
    """Both runs' results walked side by side, one line of each at a time: the 2x2 table of
    (passed in A, passed in B) and the ids that flipped, in dataset order. An eval run lists
    its results in the order of its problems file, and the walls have checked that both read
    the same one: a result whose id or expected answer differs from its partner's, or a run
    with more results than the other, is refused. Both are scored again by `version`."""
    table: Counter[tuple[bool, bool]] = Counter()
    flipped: dict[str, list[str]] = {"pass_to_fail": [], "fail_to_pass": []}
    for k, (a, b) in enumerate(zip_longest(read_results(run_a, version),
                                           read_results(run_b, version)), start=1):
        if a is None or b is None or a.id != b.id:
            shown = [f"{x.id!r:.60}" if x is not None else "nothing" for x in (a, b)]
            raise runs.RunError(f"{display_path(run_a)} and {display_path(run_b)} record the "
                                f"same dataset but score different example ids: result {k} "
                                f"is {shown[0]} in A and {shown[1]} in B")
        if a.expected_answer != b.expected_answer:
            raise runs.RunError(f"{display_path(run_a)} and {display_path(run_b)} record the "
                                f"same dataset but not the same expected answers: result {k} "
                                f"({a.id!r:.60}) expects {a.expected_answer!r:.40} in A and "
                                f"{b.expected_answer!r:.40} in B")
        table[(a.passed, b.passed)] += 1
        if a.passed != b.passed:
            flipped["pass_to_fail" if a.passed else "fail_to_pass"].append(a.id)
    return table, flipped


# -- 3. how far apart: the paired interval and the Noise Rule ---------------------------------

def paired_difference_interval(both: int, only_a: int, only_b: int, neither: int,
                               z: float = Z_95) -> tuple[float, float]:
    """95% interval for p_B - p_A when runs A and B scored the SAME n examples.

    Method: Newcombe (1998), "Improved confidence intervals for the difference between binomial
    proportions based on paired data", method 10 (square-and-add). Why paired: in a locked room
    both runs score the same problems, so their outcomes are correlated (an easy problem tends
    to pass in both). Only the flips (`only_a`, `only_b`) carry information about the change;
    an interval for two independent samples ignores that and is usually too wide.

    With p_A = (both + only_a)/n, p_B = (both + only_b)/n, Wilson intervals [l_A, u_A] and
    [l_B, u_B] (`wilson_interval`), and phi the continuity-corrected correlation of the 2x2
    table (A = both*neither - only_a*only_b; phi = (A - n/2)/sqrt(row and column product) when
    A > n/2, 0 when 0 <= A <= n/2, A/sqrt(...) when A < 0, and 0 when a margin is empty):

        lower = D - sqrt((p_B - l_B)^2 - 2 phi (p_B - l_B)(u_A - p_A) + (u_A - p_A)^2)
        upper = D + sqrt((u_B - p_B)^2 - 2 phi (u_B - p_B)(p_A - l_A) + (p_A - l_A)^2)

    where D = p_B - p_A. Returns `(lower, upper)` within [-1, 1].
    """
    n = both + only_a + only_b + neither
    passes_a, passes_b = both + only_a, both + only_b
    l_a, u_a = wilson_interval(passes_a, n, z)  # raises on n = 0
    l_b, u_b = wilson_interval(passes_b, n, z)
    p_a, p_b = passes_a / n, passes_b / n
    margins = passes_a * (n - passes_a) * passes_b * (n - passes_b)
    cross = both * neither - only_a * only_b
    if margins == 0 or 0 <= cross <= n / 2:
        phi = 0.0
    else:
        phi = (cross - n / 2 if cross > 0 else cross) / math.sqrt(margins)
    d = p_b - p_a
    down = math.sqrt(max(0.0, (p_b - l_b) ** 2 - 2 * phi * (p_b - l_b) * (u_a - p_a)
                         + (u_a - p_a) ** 2))
    up = math.sqrt(max(0.0, (u_b - p_b) ** 2 - 2 * phi * (u_b - p_b) * (p_a - l_a)
                       + (p_a - l_a) ** 2))
    return max(-1.0, d - down), min(1.0, d + up)


def noise_verdict(passes_a: int, passes_b: int, n: int,
                  interval: tuple[float, float]) -> str:
    """The Noise Rule, as a sentence.

    On fewer than 100 examples, a change of 5 points or less is "not distinguishable from noise"
    and more than 5 points is "large enough to investigate" (rule 7 of docs/rules.md, the
    course design's "> 5%"; integer arithmetic, so exactly 5 points, 3 of 60, is noise and
    3 of 59 is large). From 100 examples on, the 5-point line is silent and the paired 95%
    interval decides: a change whose interval contains 0 is noise.
    "Investigate" is deliberate: a large change is a reason to look at the flips, not proof.
    """
    if n < NOISE_MIN_EXAMPLES:
        noise = abs(passes_b - passes_a) * 100 <= NOISE_MIN_POINTS * n
    else:
        noise = interval[0] <= 0.0 <= interval[1]
    return "not distinguishable from noise" if noise else "large enough to investigate"


def compare_runs(run_a: Path | str, run_b: Path | str) -> dict[str, Any]:
    """Compare two Loop A runs, or refuse to.

    Refuses (`RunError`) a run that cannot be read back whole and intact (`read_manifest`,
    `read_results`), and any pair not measured in the same locked room: the same problems file
    (sha256), scorer version, prompt version and sampling settings (the policy's name excepted,
    `_settings`). The error names every differing field with both values.

    Returns the walls checked with their common values (`locked_room`), the problems file and
    each run's policy, the pass rates with Wilson intervals, the change
    `difference = p_B - p_A` with its paired 95% interval (`paired_difference_interval`), the
    per-example flips (counts, and the ids in dataset order) and the noise verdict
    (`noise_verdict`).
    """
    run_a, run_b = Path(run_a), Path(run_b)
    manifest_a, manifest_b = read_manifest(run_a), read_manifest(run_b)
    room_a, room_b = _locked_room(manifest_a), _locked_room(manifest_b)
    differences = [f"{field} differs (A: {json.dumps(room_a[field], sort_keys=True)}, "
                   f"B: {json.dumps(room_b[field], sort_keys=True)})"
                   for field in LOCKED_ROOM if room_a[field] != room_b[field]]
    if differences:
        raise runs.RunError(
            f"refusing to compare {display_path(run_a)} with {display_path(run_b)}: "
            "the Locked Room Rule needs the same dataset, scorer, prompt and sampling, but "
            + "; ".join(differences))
    _unknown_walls(room_a, run_a)
    table, flipped = _paired_outcomes(run_a, run_b, room_a["scorer_version"])
    both, only_a = table[(True, True)], table[(True, False)]
    only_b, neither = table[(False, True)], table[(False, False)]
    n, passes_a, passes_b = sum(table.values()), both + only_a, both + only_b
    interval = paired_difference_interval(both, only_a, only_b, neither)
    return {
        "run_a": display_path(run_a),
        "run_b": display_path(run_b),
        "locked_room": room_a,
        "problems": _problems_path(manifest_a),
        "policy_a": _policy(manifest_a),
        "policy_b": _policy(manifest_b),
        "n": n,
        "passes_a": passes_a,
        "passes_b": passes_b,
        "pass_rate_a": passes_a / n,
        "pass_rate_b": passes_b / n,
        "pass_rate_a_ci95": wilson_interval(passes_a, n),
        "pass_rate_b_ci95": wilson_interval(passes_b, n),
        "difference": (passes_b - passes_a) / n,
        "difference_ci95": interval,
        "interval_method": "Newcombe (1998) paired method 10: square-and-add of Wilson intervals",
        "flips": {"pass_to_fail": only_a, "fail_to_pass": only_b},
        "flipped_ids": flipped,
        "verdict": noise_verdict(passes_a, passes_b, n, interval),
    }
