"""A saved comparison (`course compare A B --out DIR`): two Loop A runs in the locked room.

`course compare` prints a few lines (`report_lines`); with `--out` the same comparison is also
kept as a run folder, so that a "before/after" claim has a page of its own:

- `comparison.txt`: exactly the lines the command printed;
- `comparison.json`: the report `course.locked_room.compare_runs` returns (floats rounded to 4
  decimals, as in every summary): the walls checked, both pass rates, the paired interval,
  the flips with their ids, the Noise Rule verdict;
- `manifest.json`: kind `comparison`, and the two runs' `manifest.json` and `results.jsonl`
  (everything the comparison reads) by path and sha256; it seals the other three files
  (`course.runs.sealed`);
- `README.md`: the same in plain words, with the command that makes it again.

Nothing is scored here: the numbers come from the two runs' saved results. A refused comparison
(`compare_runs` raises) builds nothing.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from course.formatting import fence_text, inline_code, one_line, percent, prose_text, rounded
from course.jsonfiles import json_bytes
from course.locked_room import (
    LOCKED_ROOM,
    NOISE_MIN_EXAMPLES,
    NOISE_MIN_POINTS,
    CompareConfig,
    compare_runs,
)
from course.paths import display_path
from course.reports.evaluation import shell_word
from course.runs import RunFiles, manifest, sealed

READ_FROM_EACH_RUN = ("manifest.json", "results.jsonl")
"""The files of a compared run that the comparison reads, pinned by sha256 in its manifest."""

IDS_SHOWN = 20
"""Flipped ids listed in the README per direction (`comparison.json` has them all)."""


def report_lines(report: Mapping[str, Any]) -> list[str]:
    """What `course compare` prints for a report of `compare_runs`, line by line."""
    lines = []
    for side in ("a", "b"):
        lo, hi = report[f"pass_rate_{side}_ci95"]
        lines.append(f"run {side.upper()}: {one_line(report[f'run_{side}'])}: "
                     f"{report[f'passes_{side}']}"
                     f"/{report['n']} pass, {percent(report[f'pass_rate_{side}'])} "
                     f"(95% CI {percent(lo)} to {percent(hi)})")
    lo, hi = report["difference_ci95"]
    # the interval's method on a line of its own: with it, the line was 118 characters wide
    lines.append(f"change B - A: {100 * report['difference']:+.1f} points "
                 f"(95% CI {100 * lo:+.1f} to {100 * hi:+.1f})")
    lines.append(f"  method: {report['interval_method']}")
    flips = report["flips"]
    lines.append(f"flips: {flips['fail_to_pass']} fail->pass, {flips['pass_to_fail']} "
                 f"pass->fail, {report['n'] - flips['fail_to_pass'] - flips['pass_to_fail']} "
                 "unchanged")
    lines.append(f"verdict: {report['verdict']} (N={report['n']})")
    return lines


def report_text(report: Mapping[str, Any]) -> str:
    """`report_lines` as the command prints them and `comparison.txt` keeps them."""
    return "".join(line + "\n" for line in report_lines(report))


def build_run(config: CompareConfig, note: str, *, record_git: bool = True) -> RunFiles:
    """Compare `config.run_a` with `config.run_b` and return the comparison run's files.

    Raises what `compare_runs` raises (`RunError`) when the runs may not be compared: then
    there are no files to write. The manifest's scorer version, prompt version and sampling
    settings are the locked room's (the same in both runs; sampling without the policy).
    """
    report = compare_runs(config.run_a, config.run_b)
    room = report["locked_room"]
    inputs = {f"run_{side}/{name}": Path(run) / name
              for side, run in (("a", config.run_a), ("b", config.run_b))
              for name in READ_FROM_EACH_RUN}
    record = manifest(
        kind="comparison", note=note, config=_config_record(config), inputs=inputs, seed=None,
        prompt_version=room["prompt_version"], sampling=room["sampling"],
        record_git=record_git, scorer_version=room["scorer_version"])
    return sealed(record, {
        "README.md": render_readme(config, note, report).encode("utf-8"),
        "comparison.json": json_bytes(_rounded_floats(report)),
        "comparison.txt": report_text(report).encode("utf-8"),
    })


def _rounded_floats(value: Any) -> Any:
    """`value` with every float rounded for an artifact (`rounded`), tuples as lists."""
    if isinstance(value, float):
        return rounded(value)
    if isinstance(value, Mapping):
        return {key: _rounded_floats(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_rounded_floats(item) for item in value]
    return value


def _config_record(config: CompareConfig) -> dict[str, Any]:
    """The config as the manifest stores it: repository-relative paths."""
    return {"run_a": display_path(config.run_a), "run_b": display_path(config.run_b),
            "out": display_path(config.out) if config.out is not None else None}


def reproduce_command(config: CompareConfig, note: str) -> str:
    """The exact `course compare` command that saves this comparison again."""
    record = _config_record(config)
    out = record["out"] or "runs/run_00X"
    return (f"course compare {shell_word(record['run_a'])} {shell_word(record['run_b'])} "
            f"--note {shell_word(note.strip())} --out {shell_word(out)}")


def _wall_value(report: Mapping[str, Any], wall: str) -> str:
    """One wall's value for the README table, as inert Markdown."""
    value = report["locked_room"][wall]
    if wall == LOCKED_ROOM[0]:  # the dataset: the file's path, then its sha256
        return f"{inline_code(str(report['problems']))}, sha256 {inline_code(str(value))}"
    return inline_code(value if isinstance(value, str) else json.dumps(value, sort_keys=True))


def _ids(ids: list[str]) -> str:
    """Up to `IDS_SHOWN` ids as code spans, then how many more."""
    shown = ", ".join(inline_code(str(i)) for i in ids[:IDS_SHOWN]) or "none"
    return shown + (f", and {len(ids) - IDS_SHOWN} more" if len(ids) > IDS_SHOWN else "")


def _noise_rule(report: Mapping[str, Any]) -> str:
    """The Noise Rule as it applied to this comparison, in a sentence."""
    n, moved = report["n"], abs(report["passes_b"] - report["passes_a"])
    if n < NOISE_MIN_EXAMPLES:
        return (f"With N={n}, fewer than {NOISE_MIN_EXAMPLES} examples, a change of at most "
                f"{NOISE_MIN_POINTS} points is treated as noise; this one is {moved} "
                f"{'example' if moved == 1 else 'examples'}, {100 * moved / n:.1f} points.")
    return (f"With N={n}, at least {NOISE_MIN_EXAMPLES} examples, the paired interval decides: "
            "a change whose interval contains 0 is noise.")


def render_readme(config: CompareConfig, note: str, report: Mapping[str, Any]) -> str:
    """The comparison in plain words: what was compared, the walls, the numbers, the flips."""
    record = _config_record(config)
    lo, hi = report["difference_ci95"]
    contains_zero = lo <= 0.0 <= hi
    flipped = report["flipped_ids"]
    unchanged = report["n"] - report["flips"]["fail_to_pass"] - report["flips"]["pass_to_fail"]
    lines = [
        f"# Locked Room comparison: the pass-rate change from "
        f"{inline_code(PurePosixPath(record['run_a']).name)} to "
        f"{inline_code(PurePosixPath(record['run_b']).name)}",
        "",
        f"Note: {prose_text(note.strip())}",
        "",
        f"Run A {inline_code(record['run_a'])} (the baseline) against run B "
        f"{inline_code(record['run_b'])}, example by example on the same {report['n']} "
        "problems. Nothing was scored again: this run reads the two runs' manifests and "
        "results, pinned by sha256 in `manifest.json`.",
        "",
        "## The Locked Room",
        "",
        "`course compare` checks these walls before it compares anything, and refuses when one "
        "differs. Both runs have the same value on each:",
        "",
        "| wall | value in both runs |",
        "|---|---|",
    ]
    lines += [f"| {wall} | {_wall_value(report, wall)} |" for wall in LOCKED_ROOM]
    lines += [
        "",
        "The sampling wall leaves out one entry, the policy's name: the policy is what a "
        f"comparison measures. Run A: {inline_code(str(report['policy_a']))}; run B: "
        f"{inline_code(str(report['policy_b']))}.",
        "",
        "## Result",
        "",
        "What `course compare` printed (also in `comparison.txt`):",
        "",
        "```text",
        *(fence_text(line) for line in report_lines(report)),
        "```",
        "",
        f"- Change B - A: {100 * report['difference']:+.1f} points, paired 95% interval "
        f"{100 * lo:+.1f} to {100 * hi:+.1f} ({report['interval_method']}). "
        + ("The interval contains 0: these examples cannot tell this change from no change."
           if contains_zero else "The interval does not contain 0."),
        f"- Flips: {report['flips']['fail_to_pass']} fail -> pass, "
        f"{report['flips']['pass_to_fail']} pass -> fail, {unchanged} unchanged. Only the "
        "flips carry information about the change.",
        f"- Noise Rule: **{report['verdict']}**. {_noise_rule(report)}",
        "",
        "## Flipped examples",
        "",
        f"- fail -> pass: {_ids(flipped['fail_to_pass'])}",
        f"- pass -> fail: {_ids(flipped['pass_to_fail'])}",
        "",
        "Read them in both runs' `results.jsonl` before trusting the change.",
        "",
        "## Files",
        "",
        "- `comparison.txt`: the lines `course compare` printed, exactly.",
        "- `comparison.json`: the same report, machine-readable, with the walls, both "
        "policies and every flipped id.",
        "- `manifest.json`: the two runs' `manifest.json` and `results.jsonl`, by path and "
        "sha256, and the sha256 of each file above (`files`).",
        "",
        "## Reproduce",
        "",
        "```sh",
        reproduce_command(config, note),
        "```",
        "",
        "`course compare --out` never overwrites a run folder, and writes nothing when the "
        "comparison is refused.",
        "",
    ]
    return "\n".join(lines)
