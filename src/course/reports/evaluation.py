"""The Loop A run (`runs/run_001` and every `course eval`): results, summary, manifest, README.

`write_results` reads the problems and the frozen rollouts, scores them one pair at a time
with `course.evaluation.score_pairs`, streams the results and summarises them as they pass
(`course.evaluation.Tally`); `build_run` returns all the run's files in memory. The manifest
takes its prompt version and sampling settings from the rollouts' provenance, so that
`course compare` can check later that two runs were measured in the same locked room.
"""

from __future__ import annotations

import hashlib
import io
import itertools
import json
import os
import shlex
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import Any, BinaryIO

from course import data, progress
from course.evaluation import EvalConfig, Tally, score_pairs
from course.formatting import fence_text, inline_code, one_line, percent, prose_text
from course.jsonfiles import json_bytes, jsonl_bytes
from course.locked_room import NOISE_MIN_EXAMPLES, NOISE_MIN_POINTS
from course.paths import display_path
from course.runs import RunFiles, manifest, sealed
from course.scorer import SCORER_VERSION
from course.scorers import SCORERS

RESULTS = "results.jsonl"
"""The run's one large file: a line per example, streamed (`write_results`)."""
CHUNK = 4096
"""Results encoded and written together: one call to the JSON encoder per 4,096 lines."""


def build_run(config: EvalConfig, note: str, *, record_git: bool = True) -> RunFiles:
    """Evaluate `config` and return the run folder's files: results, summary, manifest, README
    (`write_results`, with the results held in memory: for the canonical runs and tests)."""
    sink = io.BytesIO()
    files = write_results(config, note, sink, record_git=record_git)
    return dict(sorted({**files, RESULTS: sink.getvalue()}.items()))


def write_results(config: EvalConfig, note: str, sink: BinaryIO, *,
                  record_git: bool = True) -> RunFiles:
    """Evaluate `config`, writing `results.jsonl` to `sink` one line at a time, and return the
    run's other files: summary, manifest, README. Memory does not grow with the number of
    examples (`data.stream_pairs`, `evaluation.score_pairs`, `evaluation.Tally`):
    `course eval` streams a million rollouts into its run folder (`runs.write_streamed_run`).

    Scoring is deterministic, so the manifest's seed is None; prompt version and sampling
    settings come from the rollouts' origin (`data.origin`: a `--provenance` file, the entry in
    `data/provenance.json`, or recorded as unknown), so a later comparison can check that both
    runs were made in the same locked room. The manifest seals the other three files (their
    sha256 under `files`, `course.runs.sealed`), so `course compare` and `course runs verify`
    see an edit made after the fact. The origin is read first: a file that cannot be placed
    fails before anything is scored. An input file written to or replaced during the run is
    refused in one line (`_unchanged`): what was checked is what was scored and hashed.
    """
    inputs = [config.problems, config.rollouts, *filter(None, [config.provenance])]
    with _unchanged(inputs):
        origin = data.origin(config.rollouts, config.provenance)
        n, pairs = data.stream_pairs(config.problems, config.rollouts)
        tally, digest = Tally(), hashlib.sha256()
        results = score_pairs(progress.bar(pairs, n, "scoring"), config.scorer)
        while chunk := list(itertools.islice(results, CHUNK)):   # CHUNK results at a time
            lines = jsonl_bytes(chunk)
            sink.write(lines)
            digest.update(lines)
            for result in chunk:
                tally.add(result)
        summary = tally.summary(config.scorer)
        run_manifest = manifest(
            kind="eval", note=note, config=_config_record(config),
            inputs={"problems": config.problems, "rollouts": config.rollouts}, seed=None,
            prompt_version=origin["prompt_version"], sampling=origin["sampling"],
            origin=data.manifest_origin(origin), record_git=record_git,
            scorer_version=config.scorer)
    more = other_causes(tally, summary)
    return sealed(run_manifest, {
        "README.md": render_readme(config, note, summary, more).encode("utf-8"),
        "summary.json": json_bytes(summary),
    }, streamed={RESULTS: digest.hexdigest()})


def _fingerprint(path: Path) -> tuple[int, ...] | None:
    """What changes when the file `path` is written to or replaced: its device and inode, its
    size, and its modification and change times (the kernel sets the change time on every
    write, and nobody can set it back); None when it cannot be found."""
    try:
        status = os.stat(path)
    except OSError:
        return None
    return (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns,
            status.st_ctime_ns)


@contextmanager
def _unchanged(paths: list[Path]) -> Iterator[None]:
    """Refuse, with one `DataError`, a run during which one of its input files `paths` was
    written to or replaced (`_fingerprint` before and after).

    The files are read more than once (checked first, then paired and scored,
    `data.stream_pairs`; hashed for the manifest), so a change meanwhile would score content
    that was never checked, or fail in the middle in any way at all. Whatever fails once a
    file has changed is reported as that change, on one line; nothing is saved. (A write in
    the same clock tick as the file's previous change leaves its change time as it was; no
    tool but a content hash of every read could see that.)"""
    before = [_fingerprint(path) for path in paths]

    def changed() -> Path | None:
        return next((path for path, was in zip(paths, before, strict=True)
                     if _fingerprint(path) != was), None)

    try:
        yield
    except Exception:
        if (path := changed()) is not None:
            raise _changed(path) from None
        raise
    if (path := changed()) is not None:
        raise _changed(path)


def _changed(path: Path) -> data.DataError:
    return data.DataError(path, None, None, "changed while it was being evaluated (written to "
                          "or replaced), so what was checked is not what was scored; nothing "
                          "was saved: evaluate again once the file stays as it is")


def _config_record(config: EvalConfig) -> dict[str, Any]:
    """The config as the manifest stores it: repository-relative paths, no machine details.
    The scorer is named only when it is not the default (`strict-v1`); the manifest's
    `scorer_version` records it either way."""
    record = {"problems": display_path(config.problems),
              "rollouts": display_path(config.rollouts),
              "out": display_path(config.out) if config.out is not None else None}
    if config.provenance is not None:
        record["provenance"] = display_path(config.provenance)
    if config.scorer != SCORER_VERSION:
        record["scorer"] = config.scorer
    return record


def _escaped(text: str, limit: int = 72) -> str:
    """A completion as one visible line: JSON escapes show newlines, NBSP, U+2212 and friends
    (and the `<` of a `--8<--` snippet marker, as `\\u003c`: still the same JSON string)."""
    shown = json.dumps(text, ensure_ascii=True).replace("8<-", "8\\u003c-")
    return shown if len(shown) <= limit else f"{shown[:limit]}... ({len(text)} characters)"


def reproduce_command(config: EvalConfig, note: str) -> str:
    """The exact `course eval` command that measures `config` again (with the same
    `--provenance` file, so that `course compare` accepts the two runs as one room)."""
    record = _config_record(config)
    out = record["out"] or "runs/run_00X"
    provenance = (f"--provenance {shell_word(record['provenance'])} "
                  if "provenance" in record else "")
    scorer = f"--scorer {shell_word(record['scorer'])} " if "scorer" in record else ""
    return (f"course eval --problems {shell_word(record['problems'])} "
            f"--rollouts {shell_word(record['rollouts'])} {provenance}{scorer}"
            f"--note {shell_word(note.strip())} --out {shell_word(out)}")


def shell_word(text: str) -> str:
    """One shell word on one line: `shlex.quote` for printable text; otherwise (a line break,
    a control character, or a `--8<--` marker the site would act on) bash's `$'...'` quoting,
    whose escapes are those of `one_line`, so the command still passes the very same text."""
    if text.isprintable() and "8<-" not in text:
        return shlex.quote(text)
    return "$'" + one_line(text).replace("'", "\\'").replace("8<-", "8\\x3c-") + "'"


def other_causes(tally: Tally, summary: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The first example of each failing code that the summary's sample leaves out, most
    frequent code first: with more causes than the sample has rows, the README still shows
    one example of every cause (summary.json keeps its sample as it is)."""
    sampled = {row["code"] for row in summary["inspection"]["failing"]}
    return [{"id": first["id"], "code": row["code"], "completion": first["completion"]}
            for row in summary["failure_modes"] if row["code"] not in sampled
            for first in tally.queues.get(row["code"], [])[:1]]


def render_readme(config: EvalConfig, note: str, summary: Mapping[str, Any],
                  more: Sequence[Mapping[str, Any]] = ()) -> str:
    """The run explained in plain words: what was measured, the numbers, the evidence.

    `more`: failing examples shown after the summary's sample (`other_causes`), so that every
    cause has one; a cause left without an example is named under the list."""
    record = _config_record(config)
    version = summary["scorer_version"]
    codes = SCORERS.get(version, SCORERS[SCORER_VERSION]).codes
    lo, hi = summary["pass_rate_ci95"]
    lines = [
        f"# Loop A: the {inline_code(version)} pass rate of "
        f"{inline_code(PurePosixPath(record['rollouts']).name)} on "
        f"{inline_code(PurePosixPath(record['problems']).name)}",
        "",
        f"Note: {prose_text(note.strip())}",
        "",
        f"Every completion in {inline_code(record['rollouts'])} was scored by the strict "
        f"verifier ({inline_code(version)}) against its problem in "
        f"{inline_code(record['problems'])}. "
        "Nothing was sampled, selected or learned: this run is measurement only (Loop A).",
        "",
    ]
    if version != SCORER_VERSION:  # an earlier instrument: say so before any number
        # (without naming the current version: this run's bytes must not change with it)
        lines += [
            f"**An earlier scorer.** {inline_code(version)} is not the course's instrument "
            "(the current version, `course eval`'s default); it is kept for forensics only. "
            "Do not quote these numbers as a measurement: put this run beside a run of the "
            "same rollouts scored by the current version and explain every example on which "
            "the two disagree. `course compare` refuses the pair, because the scorer version "
            "differs.",
            "",
        ]
    lines += [
        "## Headline",
        "",
        f"- {summary['n']} completions, {summary['passes']} pass.",
        f"- Pass rate {percent(summary['pass_rate'])} "
        f"(95% Wilson interval {percent(lo)} to {percent(hi)}).",
        f"- Mean reward {summary['mean_reward']:.4f} (rewards are 0 or 1, so it equals the pass "
        "rate).",
    ]
    if summary["n"] < NOISE_MIN_EXAMPLES:
        lines.append(f"- Noise Rule: with fewer than {NOISE_MIN_EXAMPLES} examples, a later run "
                     f"that moves the pass rate by at most {NOISE_MIN_POINTS} points is not "
                     "distinguishable from noise.")
    lines += [
        "",
        "## Failures by cause",
        "",
        "| code | count | share of all | what it means |",
        "|---|---:|---:|---|",
    ]
    lines += [f"| {inline_code(row['code'])} | {row['count']} | {percent(row['share'])} | "
              f"{codes.get(row['code'], f'(not a {version} code)')} |"
              for row in summary["failure_modes"]]
    lines += [f"| **all failures** | {summary['n'] - summary['passes']} | "
              f"{percent(1 - summary['pass_rate'])} | |", ""]
    for side, title in (("passing", "Passing examples (first in dataset order)"),
                        ("failing", "Failing examples (one per cause first)")):
        rows = [*summary["inspection"][side], *(more if side == "failing" else ())]
        lines += [f"## {title}", "", "```text"]
        lines += [f"{fence_text(str(row['id'])):<12} {fence_text(row['code']):<22} "
                  f"{_escaped(row['completion'])}" for row in rows] or ["(none)"]
        lines += ["```", ""]
    shown = {row["code"] for row in [*summary["inspection"]["failing"], *more]}
    if missing := [row["code"] for row in summary["failure_modes"] if row["code"] not in shown]:
        lines += [f"No example shown of {len(missing)} of the {len(summary['failure_modes'])} "
                  f"causes: {', '.join(inline_code(code) for code in missing)}; `{RESULTS}` "
                  "has every example, with its code.", ""]
    lines += [
        "## Files",
        "",
        "- `results.jsonl`: one line per example with the raw completion, reward and the "
        "scorer's full details.",
        "- `summary.json`: the numbers above, machine-readable.",
        "- `manifest.json`: scorer version, input files with sha256, prompt version, sampling, "
        "and the sha256 of each file above (`files`), checked by `course compare`.",
        "",
        "## Reproduce",
        "",
        "```sh",
        reproduce_command(config, note),
        "```",
        "",
        "`course eval` never overwrites a run folder: measure again into a new folder, then "
        "`course compare` the two. A canonical run under `runs/` is checked byte for byte by "
        "`course runs verify`.",
        "",
    ]
    return "\n".join(lines)
