"""`course data generate | check`: the synthetic data rewritten from its seed, or checked
byte for byte against the generator and `data/provenance.json`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from course.commands.options import UsageError
from course.datagen import SEED, build_data, check, write_data
from course.formatting import one_line, terminal_text
from course.paths import DATA_DIR, display_path


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
    generate.set_defaults(func=_generate)
    verify = commands.add_parser("check", help="report files that differ from the generator")
    verify.set_defaults(func=_check)


def _generate(args: Any) -> int:
    if args.seed < 0:
        raise UsageError(f"--seed: must be >= 0, got {args.seed}")
    out = DATA_DIR if args.out is None else args.out
    written = write_data(build_data(args.seed), out, replace=args.out is None)
    for path in written:
        print(f"wrote {one_line(display_path(path))}")
    print(f"{len(written)} file(s) written, the rest unchanged")
    return 0


def _check(args: Any) -> int:
    problems = check()
    for problem in problems:
        print(terminal_text(problem))  # names from provenance.json are data
    if problems:
        print(f"{len(problems)} problem(s); if the change was on purpose, run "
              "`course data generate` and review the diff")
        return 1
    print("data/ matches the generator, and provenance.json matches every file")
    return 0
