"""`course data generate | check`: the synthetic data rewritten from its seed, or checked
byte for byte against the generator and `data/provenance.json`; `check` also checks the tiny
transformer's pre-trained base (`course.tiny_pretrain.check_base`).

A generated file that differs is shown at its first differing line, and the advice never runs
the generator over a hand edit: the generator owns those files, so a change (a new problem) is
made in its tables and then regenerated. When no generated file differs (a hand-written file,
the golden sets or the kata, changed, and `provenance.json` and `README.md` no longer describe
it), regenerating rewrites the descriptions only."""

from __future__ import annotations

from itertools import zip_longest
from pathlib import Path
from typing import Any

from course.commands.options import UsageError
from course.datagen import HANDWRITTEN, SEED, build_data, check, write_data
from course.formatting import one_line, short_literal, terminal_text
from course.paths import DATA_DIR, display_path
from course.tiny_pretrain import BASES, CHECK_STEPS, base_dir, check_base

DESCRIPTIONS = ("provenance.json", "README.md")
"""The files the generator writes about the others: they change when a hand-written one does."""
OWNED_ADVICE = (
    "The generator (src/course/datagen.py) owns these files: a line added or changed by hand is "
    "lost the next time it runs. Make the change in the generator instead (a new problem: one "
    "more in its shape's count in PLANS, and a new shape in SHAPES if none fits), then "
    "regenerate with `course data generate` and review the diff.")
KEPT_ADVICE = (
    "No generated file differs: `course data generate` rewrites provenance.json and README.md "
    "(and a missing file) and leaves the hand-written files ({}) as they are; review the diff.")


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "data", help="regenerate or check the course data",
        description="The synthetic files under data/ come from a seeded generator; "
                    "hand-written files are validated, hashed and passed through.")
    commands = parser.add_subparsers(dest="data_command", required=True, metavar="ACTION")
    generate = commands.add_parser("generate", help="write the data folder from the generator")
    generate.add_argument("--out", type=Path,
                          help="write a complete data folder here; no existing file is ever "
                               "overwritten (default: rewrite the repository's data/)")
    generate.add_argument("--seed", type=int, default=SEED, help=f"seed >= 0 (default {SEED})")
    generate.set_defaults(func=lambda values: _generate(values.out, values.seed))
    verify = commands.add_parser("check", help="report files that differ from the generator")
    verify.set_defaults(func=lambda _: _check())


def _generate(out: Path | None, seed: int) -> int:
    if seed < 0:
        raise UsageError(f"--seed: must be >= 0, got {seed}")
    written = write_data(build_data(seed), DATA_DIR if out is None else out,
                         replace=out is None)
    for path in written:
        print(f"wrote {one_line(display_path(path))}")
    print(f"{len(written)} file(s) written, the rest unchanged")
    return 0


def first_difference(name: str, have: bytes, want: bytes) -> str:
    """Where the file `name` holding `have` first departs from the generator's `want`: its line,
    as the file has it and as the generator writes it (nothing, past an end)."""
    pairs = zip_longest(have.splitlines(), want.splitlines())
    number, (ours, theirs) = next((n, pair) for n, pair in enumerate(pairs, start=1)
                                  if pair[0] != pair[1])

    def shown(line: bytes | None) -> str:
        return "nothing" if line is None else short_literal(line.decode("utf-8", "replace"), 80)

    return (f"{display_path(DATA_DIR / name)}:{number}: the file has {shown(ours)}, the "
            f"generator writes {shown(theirs)}")


def _check() -> int:
    problems = []
    for seed in BASES:                # the tiny transformer's pre-trained bases: their bytes,
        folder = base_dir(seed)       # and their first steps
        try:
            found = check_base(folder)
        except (OSError, ValueError, KeyError) as err:
            found = [f"{display_path(folder)}: cannot be read: {one_line(str(err))}"]
        for problem in found:
            print(terminal_text(problem))
        if not found:
            print(f"{display_path(folder)} holds the base its provenance describes (sha256, "
                  f"shapes, and the first {CHECK_STEPS} steps of pre-training re-run)")
        problems += found
    return 1 if _check_generated() or problems else 0


def _check_generated() -> int:
    problems = check()
    for problem in problems:
        print(terminal_text(problem))  # names from provenance.json are data
    if not problems:
        print("data/ matches the generator, and provenance.json matches every file")
        return 0
    expected = build_data(SEED, source=DATA_DIR)
    owned = [name for name, content in expected.items() if name not in DESCRIPTIONS
             and (DATA_DIR / name).is_file() and (DATA_DIR / name).read_bytes() != content]
    for name in owned:
        print(first_difference(name, (DATA_DIR / name).read_bytes(), expected[name]))
    print(f"{len(problems)} problem(s).")
    print(OWNED_ADVICE if owned else KEPT_ADVICE.format(", ".join(HANDWRITTEN)))
    return 1
