"""`course learn --model tiny-lm` and the canonical run of the tiny transformer (`runs/run_021`,
`course.reports.learn_tiny`), checked in a few seconds:

* the command's table and its before/after summary fit 80 columns, with the legend once; every
  option out of range, or not an option of the tiny transformer, is refused on one line;
* the command trains what the run saved: its rows are the first rows of the run's step log for
  the same arm and seed;
* the run's summary agrees with its raw files, recounted here another way (pass@k by the
  product form of `course.selection.pass_at_k`, the logs split on whitespace, the claims
  counted again);
* the spot check that `course runs verify run_021` runs finds an edited number: one that
  breaks the seal, and one sealed again, on a step that it trains again;
* numpy's BLAS is told to use one thread.
"""

from __future__ import annotations

import ctypes
import itertools
import json
import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from cli_run import one_error_line, run

from course import runs
from course.blas import one_blas_thread
from course.evaluation import in_how_many_seeds
from course.formatting import COLUMNS
from course.paths import RUNS_DIR
from course.reports import canonical, tiny_steps
from course.reports import learn_tiny as lt
from course.reports import learn_tiny_build as build
from course.reports import learn_tiny_report as report
from course.selection import pass_at_k
from course.tiny_learn import EvalConfig

RUN = RUNS_DIR / "run_021"
SMALL_MEASURE = replace(lt.CONFIG, measure=EvalConfig(prompts=4, samples=4))
"""The canonical settings with checkpoints of 4 prompts x 4 samples: the command measures
before and after in a fraction of a second."""


@pytest.fixture
def small_measure(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lt, "CONFIG", SMALL_MEASURE)


def saved_rows(arm: str, base: int, seed: int, steps: int) -> list[str]:
    lines = (RUN / lt.log_name(arm, base, seed)).read_text(encoding="utf-8").splitlines()
    start = lines.index(tiny_steps.LOG_HEADER) + 1
    return lines[start:start + steps]


def test_the_command_fits_80_columns_and_trains_what_the_run_saved(small_measure, capsys):
    code, out, _ = run(capsys, "learn", "--model", "tiny-lm", "--base", "2", "--reward",
                       "strict", "--advantage", "grpo", "--seed", "1", "--steps", "6",
                       "--log-every", "1")
    assert code == 0
    lines = out.splitlines()
    assert not [line for line in lines if len(line) > COLUMNS]
    assert out.count(tiny_steps.LOG_LEGEND) == 1 and out.count(tiny_steps.LOG_HEADER) == 1
    start = lines.index(tiny_steps.LOG_HEADER) + 1
    assert lines[start:start + 6] == saved_rows("strict_grpo", 2, 1, 6)
    summary = lines[lines.index("") + 1:]
    assert summary[0].startswith("Measured on 4 train and 4 held-out prompts, 4 fresh samples")
    assert [line.split()[0] for line in summary[3:]] == [
        "strict", "strict", "never", "exploit", "entropy", "length"]


@pytest.mark.parametrize(("argv", "says"), [
    (["--model", "tiny-lm", "--held-out"], "--held-out: not an option of --model tiny-lm"),
    (["--model", "tiny-lm", "--slow-motion"], "--slow-motion: not an option of --model tiny-lm"),
    (["--model", "tiny-lm", "--redraws", "1"], "--redraws: not an option of --model tiny-lm"),
    (["--model", "tiny-lm", "--out", "x", "--note", "n"], "--out: not an option of --model"),
    (["--temperature", "0.5"], "--temperature: not an option of --model table"),
    (["--prompts", "4"], "--prompts: not an option of --model table"),
    (["--base", "1"], "--base: not an option of --model table"),
    (["--warmup", "0"], "--warmup: not an option of --model table (an option of --model tiny-lm"),
    (["--model", "tiny-lm", "--batch-size", "4"], "--batch-size: not an option of --model tiny"),
    (["--model", "tiny-lm", "--temperature", "0"], "temperature: must be in (0, 10]"),
    (["--model", "tiny-lm", "--group", "1"], "group: must be >= 2 (leave-one-out baseline)"),
    (["--model", "tiny-lm", "--prompts", "600"], "prompts: must be at most 512"),
    (["--model", "tiny-lm", "--lr", "nan", "--steps", "0"], "lr: must be a finite number > 0"),
    (["--model", "tiny-lm", "--beta", "-1"], "beta: must be a finite number >= 0"),
    (["--model", "tiny-lm", "--log-every", "0"], "--log-every: must be >= 1"),
])
def test_a_refused_option_is_one_line(argv, says, capsys):
    code, out, err = run(capsys, "learn", *argv)
    assert code == 2 and out == ""
    assert one_error_line(err, "learn") and says in err, err


def read_rows(name: str) -> list[dict]:
    return [json.loads(line) for line in (RUN / name).read_text(encoding="utf-8").splitlines()]


def by_base(holds: list, bases: int) -> str:
    """A claim's count base by base, recounted: `k/n` over the runs it applies to."""
    per = len(holds) // bases
    parts = [[h for h in holds[i * per:(i + 1) * per] if h is not None] for i in range(bases)]
    return ", ".join(f"{sum(p)}/{len(p)}" for p in parts)


def test_the_summary_agrees_with_a_recount_of_the_raw_files():
    summary = json.loads((RUN / "summary.json").read_text(encoding="utf-8"))
    config, origins = lt.CONFIG, lt.CONFIG.origins()
    assert len(config.bases) >= 3 and len(config.seeds) >= 5
    counts = {(r["arm"], r["base"], r["seed"], r["step"], r["split"]): r
              for r in read_rows(lt.CHECKPOINTS_FILE)}
    assert len(counts) == len(config.arms) * len(origins) * len(config.checkpoints) * 2
    decoded = {(r["arm"], r["base"], r["seed"], r["temperature"]): r
               for r in read_rows(lt.DECODING_FILE)}

    def pass_at(row, k):
        return float(np.mean([pass_at_k(row["samples"], c, k) for c in row["correct"]]))

    last = config.checkpoints[-1]
    blocks = {block["title"]: block for item in summary["questions"].values()
              for block in item["blocks"]}
    for arm in lt.STRICT_ARMS:
        block = blocks[f"{arm}: strict pass@1, step 0 -> {last}"]
        rows = {row["label"]: row for row in block["rows"]}
        gains = {split: [pass_at(counts[(arm, b, s, last, split)], 1)
                         - pass_at(counts[(arm, b, s, 0, split)], 1) for b, s in origins]
                 for split in ("train", "held_out")}
        assert rows["gain, held-out"]["per_seed"] == pytest.approx(gains["held_out"], abs=2e-4)
        watched = [np.mean([float(line.split()[3]) for line in saved_rows(arm, b, s, 200)[-10:]])
                   for b, s in origins]
        assert rows["held-out, every step: last 10"]["per_seed"] == pytest.approx(watched,
                                                                                  abs=1e-4)
        rose = [g > 0 for g in gains["held_out"]]
        assert block["claims"][0] == {
            "claim": "held-out pass@1 rose", "holds": rose,
            "count": f"{in_how_many_seeds(rose, 'runs')}; base by base "
                     f"{by_base(rose, len(config.bases))}"}

        sharpen = blocks[f"{arm}, held-out: pass@k at step {last} minus the base's"]
        rows = {row["label"]: row for row in sharpen["rows"]}
        after = [counts[(arm, b, s, last, "held_out")]["correct"] for b, s in origins]
        before = [counts[(arm, b, s, 0, "held_out")]["correct"] for b, s in origins]
        assert rows["never solved in 64, step 200"]["per_seed"] == [c.count(0) for c in after]
        assert rows["pass@16 change"]["per_seed"] == pytest.approx(
            [pass_at(counts[(arm, b, s, last, "held_out")], 16)
             - pass_at(counts[(arm, b, s, 0, "held_out")], 16) for b, s in origins], abs=2e-4)
        rare = [[i for i, c in enumerate(counts0) if c <= report.RARE] for counts0 in before]
        again = [decoded[("base", b, -1, 1.0)]["correct"] for b, _ in origins]
        assert any(rare) and rows["of them solved at least once: step 200"]["per_seed"] == [
            sum(a[i] > 0 for i in chosen) for a, chosen in zip(after, rare, strict=True)]
        assert rows["of them solved at least once: the base measured again"]["per_seed"] == [
            sum(a[i] > 0 for i in chosen) for a, chosen in zip(again, rare, strict=True)]

        control = blocks[f"{arm}, held-out, step {last}: RL against its base decoded otherwise"]
        rows = {row["label"]: row for row in control["rows"]}
        assert rows["RL greedy: pass@1"]["per_seed"] == pytest.approx(
            [np.mean(decoded[(arm, b, s, 0.0)]["correct"]) for b, s in origins], abs=1e-4)
        assert rows["base greedy: pass@1"]["per_seed"] == pytest.approx(
            [np.mean(decoded[("base", b, -1, 0.0)]["correct"]) for b, _ in origins], abs=1e-4)
        twins = []                 # the matched temperature, found by walking the grid
        for (b, s) in origins:
            h = counts[(arm, b, s, last, "held_out")]["entropy"]
            grid = [(t, decoded[("base", b, -1, t)]["entropy"],
                     float(np.mean(decoded[("base", b, -1, t)]["correct"])) / 64)
                    for t in config.temperatures]
            for (t0, h0, p0), (t1, h1, p1) in itertools.pairwise(grid):
                if h0 <= h <= h1:
                    tau = t0 + (h - h0) / (h1 - h0) * (t1 - t0)
                    twins.append((tau, p0 + (tau - t0) / (t1 - t0) * (p1 - p0)))
                    break
        assert len(twins) >= len(origins) - 2
        assert rows["base's temperature of that entropy"]["per_seed"] == pytest.approx(
            [t for t, _ in twins], abs=1e-4)
        assert rows["base at that temperature: pass@1"]["per_seed"] == pytest.approx(
            [p for _, p in twins], abs=1e-4)
    for arm in lt.PROXY_ARMS:
        rows = {row["label"]: row for row in blocks[f"{arm} (β = {lt.ARMS[arm]['beta']}), "
                                                     f"step {last}"]["rows"]}
        kl = [np.mean([float(line.split()[4]) for line in saved_rows(arm, b, s, 200)[-10:]])
              for b, s in origins]
        assert rows["KL (nats), last 10 steps"]["per_seed"] == pytest.approx(kl, abs=1e-4)
        assert rows["exploit share, train"]["per_seed"] == [
            counts[(arm, b, s, last, "train")]["exploit_share"] for b, s in origins]


def test_a_matched_temperature_is_interpolated_inside_the_grid_only():
    grid = [(0.5, 0.1, 0.6), (1.0, 0.3, 0.2)]
    assert report.matched(0.2, grid) == pytest.approx((0.75, 0.4))
    assert report.matched(0.05, grid) is None and report.matched(0.31, grid) is None
    assert report.matched(0.2, [(0.5, 0.3, 0.6), (1.0, 0.1, 0.2)]) is None    # not rising


def test_a_claim_is_counted_over_the_runs_it_applies_to_then_base_by_base():
    said = report.claim("x", [True, False, None, None, True, True], bases=(0, 1, 2))
    assert said["count"] == f"{in_how_many_seeds([True, False, True, True], 'runs')}; " \
                            "base by base 1/2, 0/0, 2/2"


def test_the_report_fits_80_columns_and_dr_grpo_is_rloo():
    report = (RUN / "report.txt").read_text(encoding="utf-8").splitlines()
    assert max(map(len, report)) <= COLUMNS
    dr_grpo = (RUN / lt.log_name("strict_dr_grpo", 0, 0)).read_text(encoding="utf-8")
    rloo = (RUN / lt.log_name("strict_rloo", 0, 0)).read_text(encoding="utf-8")
    pairs = list(zip(dr_grpo.splitlines(), rloo.splitlines(), strict=True))
    header = dr_grpo.splitlines().index(tiny_steps.LOG_HEADER) + 1
    same = next((i for i, (a, b) in enumerate(pairs) if a != b), len(pairs)) - header
    summary = json.loads((RUN / "summary.json").read_text(encoding="utf-8"))
    assert summary["dr_grpo"]["first_rows_equal_to_rloo"] == same


def test_the_spot_check_finds_an_edited_number(tmp_path: Path):
    """An edit that leaves the seal stale is named by it; an edit sealed again (every hash
    recomputed) is found by training the spot arm's first steps again. (The committed folder
    passes: `course runs verify`, run by the test command, spot-checks it.)"""
    config = replace(lt.CONFIG, spot_steps=4)
    raw = {name: content for name, content in runs.read_files(RUN).items()
           if name.startswith("logs/") or name in (lt.CHECKPOINTS_FILE, lt.DECODING_FILE)}
    name = lt.log_name(config.spot_arm, config.bases[0], config.seeds[0])
    text = raw[name].decode("utf-8")
    row = saved_rows(config.spot_arm, config.bases[0], config.seeds[0], 3)[2]
    edited = row[:-5] + ("0.999" if row[-5:] != "0.999" else "0.998")
    raw[name] = text.replace(row, edited, 1).encode("utf-8")

    stale = tmp_path / "stale"
    shutil.copytree(RUN, stale)
    (stale / name).write_bytes(raw[name])
    found = runs.unsealed(stale)
    assert len(found) == 1 and f"{name}: sha256" in found[0], found

    resealed = runs.write_run(tmp_path / "resealed",
                              report.derived_files(config, raw, canonical.NOTES["run_021"]))
    found = build.spot_check(config, canonical.NOTES["run_021"], resealed)
    assert found == [f"{name}: trained again, step 3 reads {row.split()[1:]}, saved "
                     f"{edited.split()[1:]}"], found


def test_numpys_blas_is_told_to_use_one_thread():
    assert one_blas_thread()
    library = next((Path(np.__file__).parent.parent / "numpy.libs").glob("*openblas*"))
    getter = ctypes.CDLL(str(library)).scipy_openblas_get_num_threads64_
    assert getter() == 1


def test_the_run_is_the_same_bytes_whatever_the_number_of_processes():
    """`build_run` trains side by side, one process per core: which process trains what, and
    in which order they end, changes no byte (a small run: 1 arm x 2 bases x 2 seeds x 2
    steps, Dr. GRPO, and a decoding control of 2 temperatures)."""
    small = replace(SMALL_MEASURE, learn=replace(lt.CONFIG.learn, steps=2),
                    arms=("strict_rloo",), bases=(0, 2), seeds=(0, 1), checkpoints=(0, 2),
                    temperatures=(0.5, 1.0))
    alone, side_by_side = (build.build_run(small, "note", record_git=False, jobs=jobs)
                           for jobs in (1, 2))
    assert alone == side_by_side and len(alone) == 4 + 1 + 6
    rows = [json.loads(line) for line in alone["checkpoints.jsonl"].decode().splitlines()]
    assert [(r["arm"], r["base"], r["seed"], r["step"]) for r in rows[::2]] == [
        (arm, base, seed, step) for arm in small.arms for base in small.bases
        for seed in small.seeds for step in (0, 2)]
    decoded = [json.loads(line) for line in alone["decoding.jsonl"].decode().splitlines()]
    assert [(r["arm"], r["base"], r["temperature"]) for r in decoded] == [
        ("base", base, t) for base in small.bases for t in (0.0, 0.5, 1.0)] + [
        ("strict_rloo", base, 0.0) for base in small.bases for _ in small.seeds]
