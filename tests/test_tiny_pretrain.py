"""The tiny transformer's pre-training and its committed base, checked cheaply (a few seconds).

* the writer's characters are the model's, but for the end marker `;`, which becomes `EOT`;
* a batch: the texts in corpus order, wrapping round, `EOT` where `;` was, the mask on the
  completion and its `EOT` (or on the whole line after its first character);
* the step size: the warm-up and the cosine decay at their documented end points;
* the corpus pre-training reads holds no held-out prompt;
* the committed base: its sha256 is the provenance's, its arrays have the config's shapes, and
  its first steps, run again from the seed, give the recorded losses (`check_base`); a damaged
  copy is reported;
* the weights' archive is the same bytes for the same arrays and loads back exactly;
* `measure` agrees with a recount of the same samples by `score` and `label`.

Pre-training itself (a minute or more) is never run here: `scripts/pretrain_tiny_lm.py
--check` and `benchmarks/bench_tiny_lm.py` do that.
"""

from __future__ import annotations

import io
import math
import shutil
from dataclasses import replace
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest

from course.jsonfiles import json_bytes
from course.scorer import score
from course.tiny_lm import (
    CHAR_ID,
    EOT_ID,
    VOCAB,
    ModelConfig,
    count_params,
    decode,
    init_params,
    sample,
)
from course.tiny_pretrain import (
    BASE_DIR,
    CHECK_RTOL,
    CHECK_STEPS,
    MAX_NEW,
    OTHER_BASES,
    PretrainConfig,
    base_dir,
    batch_at,
    check_base,
    corpus,
    load_base,
    lr_at,
    measure,
    npz_bytes,
)
from course.tiny_tasks import (
    ALPHABET,
    END,
    HACKABLE,
    KINDS,
    MAX_LINE,
    PROMPT_WIDTH,
    WriterConfig,
    held_out_problems,
    label,
    train_problems,
    write_corpus,
)

SMALL = PretrainConfig(steps=10, batch_size=4, warmup=3, writer=WriterConfig(lines=6))


def test_the_writers_characters_are_the_models_and_its_end_marker_becomes_eot() -> None:
    assert END not in VOCAB
    assert set(ALPHABET) - {END} <= set(CHAR_ID)
    assert MAX_NEW == MAX_LINE - PROMPT_WIDTH


def test_a_batch_reads_the_corpus_in_order_with_eot_where_the_end_marker_was() -> None:
    lines = write_corpus(SMALL.writer, np.random.default_rng(5))
    texts = corpus(SMALL, np.random.default_rng(5))
    assert texts == [line.removesuffix(END) for line in lines]
    tokens, mask = batch_at(texts, 1, SMALL)                 # rows 4, 5, then 0, 1 (wrapped)
    rows = [4, 5, 0, 1]
    for b, i in enumerate(rows):
        ids = tokens[b].tolist()
        assert decode(ids) == texts[i]
        assert ids[len(texts[i])] == EOT_ID                   # EOT where `;` was
        marked = np.flatnonzero(mask[b]).tolist()
        assert marked == list(range(PROMPT_WIDTH, len(texts[i]) + 1))
    assert tokens.shape[1] == max(len(texts[i]) for i in rows) + 1
    _, whole = batch_at(texts, 1, replace(SMALL, loss_on="line"))
    assert [np.flatnonzero(row).tolist() for row in whole] == [
        list(range(1, len(texts[i]) + 1)) for i in rows]


def test_the_step_size_warms_up_then_decays_along_half_a_cosine() -> None:
    config = PretrainConfig(steps=101, warmup=10, lr=2e-3, final_lr=0.1)
    assert lr_at(0, config) == pytest.approx(2e-4)
    assert lr_at(9, config) == pytest.approx(2e-3)
    assert lr_at(10, config) == pytest.approx(2e-3)
    assert lr_at(55, config) == pytest.approx(2e-3 * (0.1 + 0.9 * 0.5))  # halfway: cos = 0
    assert lr_at(100, config) == pytest.approx(2e-4)
    decay = [lr_at(step, config) for step in range(10, 101)]
    assert all(a >= b for a, b in pairwise(decay))
    constant = PretrainConfig(steps=20, warmup=0, final_lr=1.0)
    assert {lr_at(step, constant) for step in range(20)} == {constant.lr}


def test_the_corpus_pretraining_reads_holds_no_held_out_prompt() -> None:
    config = load_base()[1]
    texts = corpus(config, np.random.default_rng(config.seed))
    prompts = {text[:PROMPT_WIDTH] for text in texts}
    assert len(texts) == config.writer.lines
    assert prompts <= {problem["prompt"] for problem in train_problems()}
    assert not prompts & {problem["prompt"] for problem in held_out_problems()}


def test_the_committed_base_is_what_its_provenance_says() -> None:
    params, config, record = load_base()
    assert config.model.dtype == "float32" and config == PretrainConfig.from_dict(
        config.to_dict())
    assert count_params(params) == 108_544
    assert all(array.dtype == np.float32 for array in params.values())
    assert len(record["loss_curve"]) == config.steps == record["steps"]
    # a fresh model predicts about uniformly: its first loss is close to log V
    assert record["loss_curve"][0] == pytest.approx(math.log(config.model.vocab_size), abs=0.1)
    assert check_base() == []                      # sha256, shapes, the first CHECK_STEPS losses
    assert CHECK_STEPS == 10


@pytest.mark.parametrize("seed", OTHER_BASES)
def test_each_other_base_is_what_its_provenance_says_and_differs_from_the_first(seed) -> None:
    params, config, record = load_base(base_dir(seed))
    assert config == replace(load_base()[1], seed=seed) and record["seed"] == seed
    assert record["command"] == f"python scripts/pretrain_tiny_lm.py --seed {seed}"
    assert check_base(base_dir(seed)) == []
    assert not np.array_equal(params["wte"], load_base()[0]["wte"])


def test_check_base_reports_damaged_weights_and_a_changed_curve(tmp_path: Path) -> None:
    copy = tmp_path / "tiny_lm"
    shutil.copytree(BASE_DIR, copy)
    params, _, record = load_base(copy)
    params["w_out"] = params["w_out"] + np.float32(1e-3)
    (copy / "base.npz").write_bytes(npz_bytes(params))
    record["loss_curve"][0] *= 1 + 10 * CHECK_RTOL
    (copy / "provenance.json").write_bytes(json_bytes(record))
    problems = check_base(copy, steps=1)
    assert len(problems) == 2
    assert problems[0].startswith("base.npz: sha256")
    assert problems[1].startswith("the losses of the first 1 step(s)")


def test_the_weights_archive_is_the_same_bytes_every_time_and_loads_back() -> None:
    config = PretrainConfig(model=ModelConfig(vocab_size=5, block_size=27, n_layer=1, n_embd=8,
                                              n_head=2, dtype="float32"))
    params = init_params(config.model, np.random.default_rng(0))
    content = npz_bytes(params)
    assert content == npz_bytes({name: array.copy() for name, array in params.items()})
    with np.load(io.BytesIO(content), allow_pickle=False) as archive:
        assert archive.files == list(params)
        for name, array in params.items():
            assert archive[name].dtype == array.dtype
            assert np.array_equal(archive[name], array)


def test_measure_agrees_with_a_recount_of_the_same_samples() -> None:
    params, config, _ = load_base()
    problems = train_problems()[::500] + held_out_problems()[::100]
    result = measure(params, config.model, problems, np.random.default_rng(3), per_prompt=3)
    texts = sample(params, config.model, [p["prompt"] for p in problems for _ in range(3)],
                   np.random.default_rng(3), max_new=MAX_NEW).texts
    examples = [p for p in problems for _ in range(3)]
    labels = [label(example, text) for example, text in zip(examples, texts, strict=True)]
    n = len(texts)
    assert (result.prompts, result.samples) == (len(problems), 3 * len(problems))
    assert result.strict == pytest.approx(
        sum(score(e, t)["reward"] for e, t in zip(examples, texts, strict=True)) / n)
    assert result.strict == pytest.approx(result.kinds["correct"])
    assert result.kinds == pytest.approx({k: sum(x.kind == k for x in labels) / n
                                          for k in KINDS})
    for name in HACKABLE:
        assert result.paid[name] == pytest.approx(sum(name in x.paid_by for x in labels) / n)
        assert result.unearned[name] == pytest.approx(result.paid[name] - sum(
            name in x.paid_by and x.kind == "correct" for x in labels) / n)
