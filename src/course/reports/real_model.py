"""Loops A and B on a real model (canonical `runs/run_025`): SmolLM2-135M-Instruct's answers.

`data/smollm/` holds what the model wrote for two splits (the 60 dev problems; 60 two-digit
sums), each asked three ways (the question alone; the course's prompt with its format sentence;
the same after one demonstration), greedily and at two temperatures (`course.smollm_data`).
This run measures all of it with the same instruments as the stand-in:

- Loop A: the strict scorer's pass rate with its 95% interval, the failures counted by the
  scorer's codes, and a lenient control (`course.rubrics.last_integer`: is the last integer in
  the text the answer?) that shows how much of the model's arithmetic the format hides;
- each prompt change, measured as what it is: an environment change (the Locked Room refuses
  to call it a policy's progress), with the paired interval and the Noise Rule on the greedy
  answers;
- Loop B: on each pack of 8 samples, pass@1, pass@8, Best-of-8 by the scorer and the two
  controls (a random pick; majority vote, which needs no answer key).
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from course import data, smollm_data
from course.evaluation import wilson_interval
from course.formatting import code_span, markdown_table, prose_text, rounded
from course.jsonfiles import json_bytes
from course.locked_room import noise_verdict, paired_difference_interval
from course.paths import DATA_DIR, display_path
from course.rubrics import last_integer
from course.runs import RunFiles, manifest
from course.scorer import score
from course.selection import prompt_row, score_samples, summarise

DECODINGS = ("greedy", "t0.7", "t1.0")
"""The file suffixes of `course.smollm_data`: greedy rollouts, then the two packs."""


@dataclass(frozen=True)
class RealModelConfig:
    """Everything that decides the run; saved in its manifest."""

    folder: Path = smollm_data.FOLDER
    """The real model's files (`course.smollm_data`)."""
    problems: Path = DATA_DIR / "problems"
    """Where the splits' problems are (`<split>.jsonl`)."""
    seed: int = 0
    """Seed of the random-pick control in Loop B, the run's only randomness (>= 0)."""


def _file(config: RealModelConfig, split: str, version: str, decoding: str) -> Path:
    """The file of one (split, prompt version, decoding)."""
    return config.folder / f"{split}_{smollm_data.STEMS[version]}_{decoding}.jsonl"


def completions(path: Path, decoding: str) -> dict[str, list[str]]:
    """Problem id -> the completions of one file (one for greedy, the pack's samples else)."""
    if decoding == "greedy":
        return {r["id"]: [r["completion"]] for r in data.load_rollouts(path)}
    return {r["id"]: [s["completion"] for s in r["samples"]] for r in data.load_pack(path)}


def judged(problems: Sequence[Mapping[str, Any]], texts: Mapping[str, Sequence[str]]
           ) -> list[list[tuple[str, bool]]]:
    """Per problem, per completion: (the strict scorer's code, the lenient control's verdict)."""
    return [[(score(p, text)["details"]["code"], last_integer(p, text)["reward"] == 1.0)
             for text in texts[p["id"]]] for p in problems]


def loop_a_row(verdicts: Sequence[Sequence[tuple[str, bool]]]) -> dict[str, Any]:
    """Pass counts (strict, lenient) over every completion, the prompts with at least one
    strict pass, and the strict codes counted."""
    flat = [v for row in verdicts for v in row]
    strict = sum(code == "correct" for code, _ in flat)
    lenient = sum(ok for _, ok in flat)
    row: dict[str, Any] = {
        "completions": len(flat), "strict": strict, "lenient": lenient,
        "prompts_with_a_strict_pass": sum(any(c == "correct" for c, _ in r) for r in verdicts),
        "codes": dict(Counter(code for code, _ in flat).most_common()),
    }
    if len(flat) == len(verdicts):  # one completion per prompt: independent, an interval holds
        row["strict_interval"] = [rounded(x) for x in wilson_interval(strict, len(flat))]
        row["lenient_interval"] = [rounded(x) for x in wilson_interval(lenient, len(flat))]
    return row


def prompt_change(a: Sequence[bool], b: Sequence[bool]) -> dict[str, Any]:
    """The same problems under two prompts: the paired 95% interval of the change in pass rate
    (`course.locked_room`) and the Noise Rule's verdict."""
    pairs = list(zip(a, b, strict=True))
    both = sum(x and y for x, y in pairs)
    only_a = sum(x and not y for x, y in pairs)
    only_b = sum(y and not x for x, y in pairs)
    interval = paired_difference_interval(both, only_a, only_b, len(a) - both - only_a - only_b)
    return {"before": sum(a), "after": sum(b), "n": len(a), "only_before": only_a,
            "only_after": only_b, "interval": [rounded(x) for x in interval],
            "verdict": noise_verdict(sum(a), sum(b), len(a), interval)}


def loop_b_row(problems: Sequence[Mapping[str, Any]], texts: Mapping[str, Sequence[str]],
               rng: np.random.Generator) -> dict[str, Any]:
    """Loop B on one pack, as `course select` measures it (`course.selection`)."""
    rows = []
    for p in problems:
        samples = [{"sample_id": f"{p['id']}/s{j}", "completion": t}
                   for j, t in enumerate(texts[p["id"]])]
        n = len(samples)
        rows.append(prompt_row(p, score_samples(p, samples), (1, n), rng))
    s = summarise(rows, (1, rows[0]["n_samples"]))
    return {key: s[key] for key in ("n_samples", "pass_at_1", "best_of_n", "random_control",
                                    "majority_vote")} | {"pass_at_n": s["pass_at_n_oracle"]}


def measure(config: RealModelConfig) -> dict[str, Any]:
    rng = np.random.default_rng(config.seed)
    out: dict[str, Any] = {"kind": "real_model", "splits": {}}
    for split in smollm_data.SPLITS:
        answered = completions(_file(config, split, "question", "greedy"), "greedy")
        problems = [p for p in data.load_problems(config.problems / f"{split}.jsonl")
                    if p["id"] in answered]     # a problem added since the model answered
        part: dict[str, Any] = {"n_problems": len(problems), "loop_a": {}, "loop_b": {},
                                "examples": {}}
        greedy: dict[str, dict[str, list[bool]]] = {}
        for version in smollm_data.PROMPT_VERSIONS:
            name = smollm_data.STEMS[version]
            for decoding in DECODINGS:
                texts = completions(_file(config, split, version, decoding), decoding)
                verdicts = judged(problems, texts)
                part["loop_a"][f"{name}_{decoding}"] = loop_a_row(verdicts)
                if decoding != "greedy":
                    part["loop_b"][f"{name}_{decoding}"] = loop_b_row(problems, texts, rng)
                    continue
                greedy[name] = {"strict": [r[0][0] == "correct" for r in verdicts],
                                "lenient": [r[0][1] for r in verdicts]}
                part["examples"][name] = [
                    {"id": p["id"], "expected_answer": p["expected_answer"],
                     "completion": texts[p["id"]][0], "code": r[0][0]}
                    for p, r in zip(problems, verdicts, strict=True)
                    if r[0][1] and r[0][0] != "correct"][:3]
        names = list(greedy)
        part["prompt_changes"] = {
            f"{before} -> {after}": {kind: prompt_change(greedy[before][kind],
                                                         greedy[after][kind])
                                     for kind in ("strict", "lenient")}
            for before, after in itertools.pairwise(names)}
        out["splits"][split] = part
    return out


LABELS = {"question": "the question alone", "final": "with the format sentence",
          "oneshot": "one demonstration first"}
DECODING_LABELS = {"greedy": "greedy", "t0.7": "τ = 0.7, 8 samples", "t1.0": "τ = 1.0, 8 samples"}


def _count(k: int, n: int, interval: Sequence[float] | None) -> str:
    shown = f"{k} of {n}"
    return shown if interval is None else f"{shown} ({interval[0]:.2f} to {interval[1]:.2f})"


def _split_sections(split: str, s: Mapping[str, Any]) -> list[str]:
    a_rows, b_rows = [], []
    for key, row in s["loop_a"].items():
        name, decoding = key.split("_", 1)
        codes = ", ".join(f"{code} {k}" for code, k in row["codes"].items())
        a_rows.append([LABELS[name], DECODING_LABELS[decoding],
                       _count(row["strict"], row["completions"], row.get("strict_interval")),
                       _count(row["lenient"], row["completions"], row.get("lenient_interval")),
                       codes])
    for key, row in s["loop_b"].items():
        name, decoding = key.split("_", 1)
        b_rows.append([LABELS[name], DECODING_LABELS[decoding].split(",")[0],
                       f"{row['pass_at_1']:.3f}", f"{row['pass_at_n']:.3f}",
                       f"{row['best_of_n']:.3f}", f"{row['random_control']:.3f}",
                       f"{row['majority_vote']:.3f}"])
    examples = [f"- `{e['id']}` (expects {e['expected_answer']}; strict code `{e['code']}`): "
                f"{code_span(e['completion'])}" for e in s["examples"]["final"]]
    return [
        f"## The `{split}` split ({s['n_problems']} problems)",
        "",
        "### Loop A: the strict scorer and a lenient control",
        "",
        *markdown_table(["prompt", "decoding", "strict", "lenient", "strict codes"], a_rows),
        "",
        "Greedy answers (with the format sentence) that the lenient control accepts and the "
        "strict scorer refuses:",
        "",
        *(examples or ["- none"]),
        "",
        "### Each prompt change, measured as an environment change (greedy answers)",
        "",
        *markdown_table(["prompt change", "verifier", "before", "after", "flips",
                         "paired 95% interval of the change", "Noise Rule"],
                        [[" → ".join(LABELS[n] for n in change.split(" -> ")), kind,
                          f"{c['before']} of {c['n']}", f"{c['after']} of {c['n']}",
                          f"{c['only_before']} lost, {c['only_after']} gained",
                          f"{c['interval'][0]:+.3f} to {c['interval'][1]:+.3f}", c["verdict"]]
                         for change, both in s["prompt_changes"].items()
                         for kind, c in both.items()]),
        "",
        "### Loop B: selecting from 8 samples",
        "",
        *markdown_table(["prompt", "temperature", "pass@1", "pass@8", "Best-of-8", "random",
                         "majority vote"], b_rows),
        "",
    ]


def render_readme(note: str, s: Mapping[str, Any]) -> str:
    return "\n".join([
        "# Loops A and B on a real model: SmolLM2-135M-Instruct",
        "",
        f"Note: {prose_text(note.strip())}",
        "",
        "The model's completions are `data/smollm/` (`data/provenance.json` says how they "
        "were made). Nothing was trained: this run measures and selects.",
        "",
        "- Strict: the course's scorer. Lenient: is the last integer in the text the answer "
        "(`last_integer`, a rubric the red team breaks; here only a control that shows the "
        "arithmetic the format hides). Counts of completions, with the 95% interval where "
        "each problem has one completion (greedy).",
        "- A prompt change is a change of environment, not of the model: `course compare` "
        "refuses to read it as a policy's progress (the prompt version is a wall of the "
        "Locked Room). It is measured here as a new environment, with the same paired "
        "interval and Noise Rule.",
        "- Best-of-8 picks by the strict scorer, an oracle (it knows the answer), so it "
        "equals pass@8; the random pick is what luck gives; majority vote is the pick one "
        "could deploy. Means over the prompts.",
        "",
        *[line for split, part in s["splits"].items()
          for line in _split_sections(split, part)],
    ])


def build_run(config: RealModelConfig, note: str, *, record_git: bool = True) -> RunFiles:
    """The run's files: `summary.json` (`measure`), `manifest.json`, `README.md`."""
    summary = measure(config)
    inputs = {f"{split}_{smollm_data.STEMS[v]}_{d}": _file(config, split, v, d)
              for split in smollm_data.SPLITS for v in smollm_data.PROMPT_VERSIONS
              for d in DECODINGS}
    inputs |= {f"problems_{split}": config.problems / f"{split}.jsonl"
               for split in smollm_data.SPLITS}
    record = {"note": note, **asdict(config)}
    record["folder"], record["problems"] = (display_path(config.folder),
                                            display_path(config.problems))
    return {
        "manifest.json": json_bytes(manifest(
            kind="real_model", note=note, config=record, inputs=inputs, seed=config.seed,
            record_git=record_git)),
        "summary.json": json_bytes(summary),
        "README.md": render_readme(note, summary).encode("utf-8"),
    }
