"""The course data: loaders reject bad files clearly, the generator is exact, the data says what
the lessons claim (answers, failure modes, selection cases, kata split)."""

from __future__ import annotations

import argparse
import ast
import itertools
import json
import re
from collections import Counter
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from course import data, datagen, scorers
from course.commands import data as data_command
from course.data import DataError
from course.paths import DATA_DIR, REPO_ROOT, display_path, sha256_file
from course.scorer import SCORER_VERSION, parse, score
from course.scorers import SCORERS

DEV = DATA_DIR / "problems" / "dev.jsonl"
HOLDOUT = DATA_DIR / "problems" / "holdout.jsonl"
FROZEN = DATA_DIR / "rollouts" / "frozen_v1.jsonl"
PACK = DATA_DIR / "selection" / "pack_n8.jsonl"
KATA = DATA_DIR / "kata" / "kata_m0.jsonl"
KATA_M5 = DATA_DIR / "kata" / "kata_m5.jsonl"
KEY_DIR = REPO_ROOT / "teacher" / "kata"  # the teacher's copy only: a student copy has no teacher/
KEY, KEY_M5 = KEY_DIR / "teacher_key_m0.json", KEY_DIR / "teacher_key_m5.json"

# -- loaders: every error names file, line and field --------------------------------------------

GOOD_PROBLEM = '{"id": "a", "prompt": "Compute 1+1.", "expected_answer": 2}'
SAMPLE = '{"sample_id": "a/s0", "completion": "Final: 2", "policy_mode": "correct"}'

LOADER_ERRORS = [
    # (case, loader, file lines, line, field, words in the problem)
    ("bad JSON", data.load_problems, [GOOD_PROBLEM, '{"id": "b",'], 2, None, "invalid JSON"),
    ("not an object", data.load_problems, ["[1, 2]"], 1, None, "expected a JSON object"),
    ("missing key", data.load_problems, ['{"id": "a", "prompt": "p"}'], 1, "expected_answer",
     "missing"),
    ("answer as string", data.load_problems,
     ['{"id": "a", "prompt": "p", "expected_answer": "323"}'], 1, "expected_answer",
     "must be int, got str"),
    ("answer as float", data.load_problems,
     ['{"id": "a", "prompt": "p", "expected_answer": 323.0}'], 1, "expected_answer",
     "must be int, got float"),
    ("answer as bool", data.load_problems,
     ['{"id": "a", "prompt": "p", "expected_answer": true}'], 1, "expected_answer",
     "must be int, got bool"),
    ("duplicate id", data.load_problems, [GOOD_PROBLEM, GOOD_PROBLEM], 2, "id",
     "duplicate id 'a' (first on line 1)"),
    ("rollout completion not a string", data.load_rollouts,
     ['{"id": "a", "completion": null, "policy_mode": "correct"}'], 1, "completion",
     "must be str, got NoneType"),
    ("empty samples", data.load_pack, ['{"id": "a", "samples": []}'], 1, "samples",
     "must not be empty"),
    ("sample not an object", data.load_pack, [f'{{"id": "a", "samples": [{SAMPLE}, "x"]}}'], 1,
     "samples[1]", "must be an object"),
    ("wrong type inside samples", data.load_pack,
     [f'{{"id": "a", "samples": [{SAMPLE}, {SAMPLE.replace("a/s0", "a/s1")[:-1]}, "extra": 1}}]}}',
      '{"id": "b", "samples": [{"sample_id": "b/s0", "completion": 7, "policy_mode": "x"}]}'],
     2, "samples[0].completion", "must be str, got int"),
    ("sample missing key", data.load_pack,
     ['{"id": "a", "samples": [{"sample_id": "a/s0", "policy_mode": "x"}]}'], 1,
     "samples[0].completion", "missing"),
    ("unknown exploit class", data.load_golden,
     ['{"id": "e", "expected_answer": 1, "completion": "1", "note": "n", '
      '"exploit_class": "guessing", "expected_code": "no_final_prefix"}'], 1, "exploit_class",
     "unknown class 'guessing'"),
    ("exploit without expected code", data.load_golden,
     ['{"id": "e", "expected_answer": 1, "completion": "1", "note": "n", '
      '"exploit_class": "answer_anywhere"}'], 1, "expected_code", "missing"),
    ("kata reward as int", data.load_kata,
     ['{"id": "k", "prompt": "p", "expected_answer": 1, "completion": "c", "reward": 1, '
      '"code": "correct"}'], 1, "reward", "must be float, got int"),
]


@pytest.mark.parametrize(("case", "loader", "lines", "line", "field", "problem"), LOADER_ERRORS,
                         ids=[row[0] for row in LOADER_ERRORS])
def test_loader_errors_name_file_line_and_field(tmp_path, case, loader, lines, line, field,
                                                problem):
    path = tmp_path / "broken.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(DataError) as caught:
        loader(path)
    err = caught.value
    assert (err.path, err.line, err.field) == (path, line, field)
    assert problem in err.problem
    where = f"{path}:{line}: " + (f"field '{field}': " if field else "")
    assert str(err).startswith(where)


def test_empty_file_and_missing_file(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n", encoding="utf-8")
    with pytest.raises(DataError, match="no records"):
        data.load_problems(empty)
    with pytest.raises(DataError, match="file not found"):
        data.load_problems(tmp_path / "absent.jsonl")


@pytest.mark.parametrize(("content", "field", "problem"), [
    ('{"kata-01": {"cause": "bad luck", "why": "w", "fix": "f"}}', "kata-01.cause",
     "unknown cause 'bad luck'"),
    ('{"kata-01": {"cause": "model_failure", "why": "w"}}', "kata-01.fix", "missing"),
    ('{"kata-01": "model_failure"}', "kata-01", "must be an object"),
    ("[]", None, "expected a JSON object"),
    ("{}", None, "no entries"),
])
def test_kata_key_errors(tmp_path, content, field, problem):
    path = tmp_path / "key.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(DataError) as caught:
        data.load_kata_key(path)
    assert caught.value.field == field and problem in caught.value.problem


# -- provenance --------------------------------------------------------------------------------

def test_provenance_gives_prompt_version_and_sampling():
    entry = data.provenance(FROZEN)
    assert entry["prompt_version"] == datagen.PROMPT_VERSION
    assert entry["sampling"]["policy"] == datagen.POLICY
    assert entry["sampling"]["n"] == 1
    assert "no language model was run" in entry["sampling"]["note"]
    assert data.provenance(PACK)["sampling"]["n"] == datagen.PACK_N


def test_provenance_errors(tmp_path):
    with pytest.raises(DataError, match="no entry for"):
        data.provenance(tmp_path / "elsewhere.jsonl")
    registry = tmp_path / "provenance.json"
    registry.write_text(json.dumps({"files": {display_path(FROZEN): {"sha256": "0" * 64}}}))
    with pytest.raises(DataError, match="stale"):
        data.provenance(FROZEN, registry)


def test_every_file_in_provenance_matches_its_bytes_and_count():
    entries = json.loads((DATA_DIR / "provenance.json").read_text())["files"]
    loaders = {"problems": data.load_problems, "rollouts": data.load_rollouts,
               "selection": data.load_pack, "golden": data.load_golden}
    # data/tiny_lm/ is the tiny transformer's pre-trained base, with a provenance of its own
    # (course.tiny_pretrain.check_base, tests/test_tiny_pretrain.py); data/smollm/made.json is
    # the real model's script's record, from which its files' entries come (test_smollm.py)
    on_disk = {display_path(p) for p in DATA_DIR.rglob("*")
               if p.is_file() and p.name not in ("provenance.json", "README.md", "made.json")
               and "tiny_lm" not in p.relative_to(DATA_DIR).parts}
    assert set(entries) == on_disk
    for key, entry in entries.items():
        path = DATA_DIR / key.removeprefix("data/")
        assert sha256_file(path) == entry["sha256"], key
        folder = Path(key).parts[1]
        if folder == "smollm":
            folder = "rollouts" if key.endswith("_greedy.jsonl") else "selection"
        if folder in loaders:
            assert len(loaders[folder](path)) == entry["records"], key
        assert entry["version"] == datagen.DATA_VERSION


# -- the generator is exact --------------------------------------------------------------------

def test_same_seed_same_bytes_different_seed_different_bytes():
    first, again = datagen.build_data(datagen.SEED), datagen.build_data(datagen.SEED)
    assert first == again
    other = datagen.build_data(datagen.SEED + 1)
    for name in ("problems/dev.jsonl", "problems/holdout.jsonl", "rollouts/frozen_v1.jsonl",
                 "selection/pack_n8.jsonl"):
        assert other[name] != first[name], name
    assert other["golden/correct.jsonl"] == first["golden/correct.jsonl"]  # hand-written


def test_committed_data_equals_generator_output():
    assert datagen.check() == []


def test_check_reports_changed_file_and_stale_hash(tmp_path):
    datagen.write_data(datagen.build_data(), tmp_path)
    assert datagen.check(tmp_path) == []
    (tmp_path / "rollouts" / "frozen_v1.jsonl").write_bytes(b'{"id": "dev-001"}\n')
    problems = datagen.check(tmp_path)
    assert any("frozen_v1.jsonl: differs" in p for p in problems)
    assert any("stale sha256 for data/rollouts/frozen_v1.jsonl" in p for p in problems)


def run_data_command(argv: list[str]) -> int:
    """`course data ...` through the module's own `register`, as the CLI wires it."""
    parser = argparse.ArgumentParser(prog="course")
    data_command.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.func(args)


def test_generate_and_check_commands(tmp_path, capsys):
    assert run_data_command(["data", "generate", "--out", str(tmp_path / "d")]) == 0
    assert f"{len(datagen.build_data())} file(s) written" in capsys.readouterr().out
    assert datagen.check(tmp_path / "d") == []
    assert run_data_command(["data", "generate", "--out", str(tmp_path / "d")]) == 0
    assert "0 file(s) written" in capsys.readouterr().out  # unchanged files are not touched
    assert run_data_command(["data", "check"]) == 0


def test_handwritten_files_use_the_canonical_layout():
    """One `json.dumps` object per line, ASCII: invisible characters stay visible as escapes."""
    for name in ("golden/correct.jsonl", "golden/exploits.jsonl", "kata/kata_m0.jsonl"):
        for line in (DATA_DIR / name).read_text(encoding="ascii").splitlines():
            assert line == json.dumps(json.loads(line)), name


# -- problems: answers re-checked independently ------------------------------------------------

_ALLOWED = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Constant, ast.Name, ast.Load,
            ast.Add, ast.Sub, ast.Mult, ast.Div, ast.USub)


def reference_eval(expression: str, names: dict[str, int] | None = None) -> int:
    """Python's own evaluator on a whitelisted AST, with exact fractions for `/`."""
    tree = ast.parse(expression, mode="eval")
    assert all(isinstance(node, _ALLOWED) for node in ast.walk(tree)), expression
    values = {k: Fraction(v) for k, v in (names or {}).items()}
    result = eval(compile(tree, "<answer>", "eval"), {"__builtins__": {}}, values)
    result = Fraction(result)
    assert result.denominator == 1, f"{expression} is not an integer"
    return int(result)


@pytest.fixture(scope="module")
def splits():
    return datagen.make_splits(np.random.default_rng(datagen.SEED))


def test_generator_problems_are_the_committed_ones(splits):
    dev, holdout = splits
    assert [p.record() for p in dev] == data.load_problems(DEV)
    assert [p.record() for p in holdout] == data.load_problems(HOLDOUT)


def test_every_answer_rechecked_from_the_prompt(splits):
    instruction = " " + datagen.INSTRUCTION
    for problem in (p for split in splits for p in split):
        assert problem.prompt.endswith(instruction)
        text = problem.prompt.removesuffix(instruction)
        shape = datagen.SHAPES[problem.shape]
        if shape.kind == "arithmetic":
            expression = re.fullmatch(r"Compute ([0-9+\-*()]+)\.", text).group(1)
            assert reference_eval(expression) == problem.answer, problem.id
        else:
            numbers = [int(n) for n in re.findall(r"\d+", text)]
            assert numbers == [problem.values[k] for k in sorted(problem.values)], problem.id
            assert reference_eval(shape.formula, problem.values) == problem.answer, problem.id
        assert problem.mistake != problem.answer


HAND_SOLVED = [
    # (shape, operands, the answer worked out by hand from the prompt's wording)
    ("boxes", {"a": 7, "b": 13}, 91),
    ("change", {"a": 6, "b": 5, "c": 50}, 20),
    ("ages", {"a": 8, "b": 3, "c": 7}, 31),
    ("trains", {"a": 105, "b": 4, "c": 70, "d": 2}, 560),
    ("temperature", {"a": 3, "b": 12}, -9),
    ("chairs", {"a": 13, "b": 11, "c": 17}, 126),
    ("sharing", {"a": 48, "b": 6}, 8),
    ("balance", {"a": 50, "b": 5, "c": 42}, -160),
    ("sister", {"a": 9, "b": 3, "c": 4}, 10),
]


@pytest.mark.parametrize(("shape", "values", "answer"), HAND_SOLVED,
                         ids=[row[0] for row in HAND_SOLVED])
def test_word_formulas_match_hand_solved_prompts(shape, values, answer):
    """The formula says what the sentence says: checked against answers solved by hand."""
    problem = datagen.Problem("x", shape, values)
    assert problem.answer == answer, problem.prompt
    assert problem.mistake != answer


def test_every_word_shape_is_hand_solved():
    word = {name for name, shape in datagen.SHAPES.items() if shape.kind == "word"}
    assert word == {row[0] for row in HAND_SOLVED}


def test_splits_have_the_promised_shape():
    dev, holdout = data.load_problems(DEV), data.load_problems(HOLDOUT)
    assert [p["id"] for p in dev] == [f"dev-{i:03d}" for i in range(1, 61)]
    assert [p["id"] for p in holdout] == [f"hold-{i:03d}" for i in range(1, 26)]
    assert dev[0]["prompt"].startswith("Compute 17*19.") and dev[0]["expected_answer"] == 323
    assert not {p["prompt"] for p in dev} & {p["prompt"] for p in holdout}
    for split in (dev, holdout):
        answers = [p["expected_answer"] for p in split]
        assert 0 in answers and min(answers) < 0
        assert sum(p["prompt"].startswith("Compute") for p in split) < len(split)  # word problems


# -- the stand-in policy and its frozen rollouts -----------------------------------------------

MODE_CODE = {
    "correct": "correct", "correct_newline": "correct",
    "arithmetic_slip": "wrong_answer", "misconception": "wrong_answer",
    "sentence": "no_final_prefix", "bare_number": "no_final_prefix",
    "markdown_bold": "no_final_prefix",
    "reasoning_then_answer": "multiple_lines", "repeated_final": "multiple_lines",
    "missing_space": "bad_separator", "double_space": "bad_separator",
    "leading_zero": "non_canonical_integer", "unicode_lookalike": "non_ascii_character",
    "trailing_period": "not_an_integer",
    "hack_hedge": "not_an_integer", "hack_candidate_list": "not_an_integer",
    "hack_laundering": "multiple_lines", "hack_template_echo": "not_an_integer",
}
"""What the scorer must say about each stand-in mode: the modes are named by what they do."""
SPEC_CHANGE = ("after a deliberate spec change, update MODE_CODE in tests/test_data.py "
               "(docs/teacher/change-the-scorer.md, step 4)")


def test_mode_table_is_complete_and_rates_sum_to_one():
    assert set(datagen.POLICY_MODES) == set(MODE_CODE)
    assert sum(m.rate for m in datagen.POLICY_MODES.values()) == pytest.approx(1.0)
    assert sum(datagen.quotas(60).values()) == 60


@pytest.mark.parametrize("mode", list(MODE_CODE))
def test_each_mode_gets_its_code_on_every_problem(splits, mode):
    rng = np.random.default_rng(0)
    for problem in splits[0]:
        completion = datagen.render(mode, problem, rng)
        code = score(problem.record(), completion)["details"]["code"]
        assert code == MODE_CODE[mode], (
            f"{problem.id}: the stand-in's {mode!r} mode writes {completion!r}, which the scorer "
            f"now codes {code!r}, not {MODE_CODE[mode]!r}: {SPEC_CHANGE}")


def test_frozen_rollouts_have_a_realistic_failure_mix():
    problems = data.load_problems(DEV)
    rollouts = data.load_rollouts(FROZEN)
    pairs = data.join_on_id(problems, rollouts, FROZEN)
    codes = Counter()
    for problem, rollout in pairs:
        code = score(problem, rollout["completion"])["details"]["code"]
        assert code == MODE_CODE[rollout["policy_mode"]], (
            f"{FROZEN.name}: {rollout['id']} ({rollout['policy_mode']!r}) "
            f"{rollout['completion']!r} is now coded {code!r}, not "
            f"{MODE_CODE[rollout['policy_mode']]!r}: {SPEC_CHANGE}")
        codes[code] += 1
    assert len(codes) >= 6
    assert 0.55 <= codes["correct"] / 60 <= 0.60
    assert 0.13 <= codes["wrong_answer"] / 60 <= 0.17
    assert max(n for code, n in codes.items() if code != "correct") < codes["correct"] / 3
    hacks = sum(r["policy_mode"] in datagen.HACK_MODES for r in rollouts)
    assert 2 <= hacks <= 3
    assert dict(Counter(r["policy_mode"] for r in rollouts)) == {
        k: v for k, v in datagen.quotas(60).items() if v}


# -- the selection pack ------------------------------------------------------------------------

def majority_answer(problem, samples):
    """Plurality among well-formed answers (ties: smallest), as a reference majority vote."""
    votes = Counter(parse(s["completion"])[0] for s in samples)
    votes.pop(None, None)
    return min(votes, key=lambda a: (-votes[a], a)) if votes else None


@pytest.fixture(scope="module")
def pack():
    problems = {p["id"]: p for p in data.load_problems(DEV)}
    rows = data.load_pack(PACK)
    return [(problems[row["id"]], row["samples"],
             [score(problems[row["id"]], s["completion"])["reward"] for s in row["samples"]])
            for row in rows]


def test_pack_shape_and_pass_rates(pack):
    assert len(pack) == 60
    for problem, samples, _ in pack:
        assert [s["sample_id"] for s in samples] == [f"{problem['id']}/s{k}" for k in range(8)]
    pass1 = np.mean([np.mean(rewards) for _, _, rewards in pack])
    pass8 = np.mean([max(rewards) for _, _, rewards in pack])
    assert 0.45 <= pass1 <= 0.60
    assert 0.85 <= pass8 <= 0.95


def test_only_the_designed_prompts_fail_on_every_sample(pack):
    designed = data.provenance(PACK)["designed_cases"]
    failing = {p["id"]: (p, s) for p, s, rewards in pack if max(rewards) == 0.0}
    assert set(failing) == set(designed["all_fail"])
    assert len(failing) == 3
    reasons = {}
    for problem, samples in failing.values():
        answer = problem["expected_answer"]
        parsed = [parse(s["completion"])[0] for s in samples]
        vote = majority_answer(problem, samples)
        if all(p is None for p in parsed):  # format always broken, the number always right
            assert all(str(answer) in s["completion"] for s in samples)
            reasons[problem["id"]] = "format"
        elif len(set(parsed)) == 8:  # every sample a different wrong number
            reasons[problem["id"]] = "too_hard"
        else:  # one wrong answer repeated: majority vote is confidently wrong
            assert parsed.count(vote) >= 5 and vote != answer
            reasons[problem["id"]] = "misconception"
    assert sorted(reasons.values()) == ["format", "misconception", "too_hard"]


def test_designed_prompts_where_majority_vote_and_best_of_n_disagree(pack):
    designed = set(data.provenance(PACK)["designed_cases"]["vote_disagrees"])
    assert len(designed) == 4
    by_id = {p["id"]: (p, s, r) for p, s, r in pack}
    for pid in designed:
        problem, samples, rewards = by_id[pid]
        assert max(rewards) == 1.0
        assert majority_answer(problem, samples) != problem["expected_answer"]


# -- the kata ----------------------------------------------------------------------------------

@pytest.mark.skipif(not KEY_DIR.is_dir(), reason="the kata keys are in teacher/kata/, which "
                    "the students' copy leaves out")
@pytest.mark.parametrize(("kata_path", "key_path", "prefix"),
                         [(KATA, KEY, "kata"), (KATA_M5, KEY_M5, "m5")], ids=["m0", "m5"])
def test_kata_split_ids_and_recorded_rewards(kata_path, key_path, prefix):
    """The key has one entry per example, in order, ids numbered from 01; every cause appears
    at least twice and the causes are shuffled. A record by the scorer of the time is right for
    model failures and ambiguity; a verifier bug or a hack was recorded by an older or weaker
    scorer, so re-scoring it today changes the reward."""
    kata, key = data.load_kata(kata_path), data.load_kata_key(key_path)
    ids = [k["id"] for k in kata]
    assert ids == list(key) == [f"{prefix}-{i:02d}" for i in range(1, len(ids) + 1)]
    causes = [key[k["id"]]["cause"] for k in kata]
    assert min(Counter(causes)[cause] for cause in data.KATA_CAUSES) >= 2
    assert sum(a != b for a, b in itertools.pairwise(causes)) >= len(ids) // 2  # not grouped
    for example, cause in zip(kata, causes, strict=True):
        now = score(example, example["completion"])
        recorded = (example["reward"], example["code"])
        version = example.get("scorer_version", SCORER_VERSION)  # only the M5 kata records it
        if cause in ("model_failure", "ambiguous_spec"):  # the scorer was right at the time
            assert version in SCORERS, f"{example['id']}: {scorers.unknown(version)}"
            then = SCORERS[version].score(example, example["completion"])
            assert recorded == (then["reward"], then["details"]["code"]) == (0.0, recorded[1]), (
                f"{example['id']}: recorded {recorded}, but {version} gives "
                f"{(then['reward'], then['details']['code'])}")
        else:  # a verifier bug or a hack: the recorded reward is wrong today
            assert example["reward"] != now["reward"], example["id"]
        if cause == "reward_hack":  # a weak rubric paid for it
            assert example["reward"] == 1.0 and now["reward"] == 0.0, example["id"]
        if cause in ("verifier_bug", "reward_hack") and "scorer_version" in example:
            assert version != SCORER_VERSION, example["id"]
        assert example["prompt"].endswith(datagen.INSTRUCTION)
