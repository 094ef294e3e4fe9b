"""The scorer against hostile and real-world inputs: total for any example and any completion.

Three parts:

1. one regression test per bug class, each a concrete reproduction that crashed or misjudged
   under the scorer as it was before this file existed (a str subclass with a lying `strip`
   earned reward 1.0 for "garbage");
2. the versioning argument for the one decision that changed (an `expected_answer` longer than
   MAX_DIGITS is now `invalid_example`), pinned so that it cannot silently stop being true;
3. hypothesis fuzzing with hostile objects: mappings whose methods raise, str and int subclasses
   whose methods lie or raise, metaclasses that break `__name__`, arbitrary Unicode including
   lone surrogates.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from course.cli import main
from course.data import load_golden, load_kata, load_problems, read_jsonl
from course.paths import DATA_DIR, RUNS_DIR
from course.scorer import CODES, MAX_DIGITS, SCORER_VERSION, SPEC_DECISIONS, parse, score

DEV_001 = {"id": "dev-001", "prompt": "Compute 17*19. Output exactly one line: Final: <int>",
           "expected_answer": 323}
LIMIT = 10**MAX_DIGITS  # every in-spec answer n has abs(n) < LIMIT
FUZZ = settings(max_examples=400, deadline=None)


def assert_well_formed(result: Any) -> None:
    """The contract every result keeps, whatever went in."""
    assert set(result) == {"reward", "details"}
    assert result["reward"] in (0.0, 1.0)
    assert result["details"]["code"] in CODES
    assert (result["reward"] == 1.0) == (result["details"]["code"] == "correct")
    assert result["details"]["scorer_version"] == SCORER_VERSION
    assert type(result["details"]["message"]) is str and result["details"]["message"]


# -- hostile objects ------------------------------------------------------------------------------

class Boom(Exception):
    """What the hostile methods below raise."""


def boom(*_args: Any, **_kwargs: Any) -> Any:
    raise Boom("a hostile method was called")


class NamelessMeta(type):
    """A metaclass whose classes have no readable `__name__`."""

    @property
    def __name__(cls) -> str:  # type: ignore[override]
        raise Boom("no name")


class RaisingMapping(Mapping):
    """A Mapping whose every read raises."""

    __getitem__ = boom

    def __iter__(self) -> Iterator[str]:
        return iter(["expected_answer"])

    def __len__(self) -> int:
        return 1


class RaisingGet(dict):
    """A dict whose `get` raises."""

    get = boom


class CollidingKey:
    """A key with the hash of "expected_answer" that raises when compared: a plain `dict`
    holding it raises on `.get("expected_answer")`."""

    def __hash__(self) -> int:
        return hash("expected_answer")

    __eq__ = boom


class FakeClass:
    """An object whose `__class__` raises: `isinstance` consults it, and crashes."""

    @property
    def __class__(self) -> type:  # type: ignore[override]
        raise Boom("no class")


class PretendsToBeStr:
    """Not a str, but claims to be one, and has a `strip` that returns a correct answer."""

    __class__ = str  # type: ignore[assignment]

    def strip(self, *_args: Any) -> str:
        return "Final: 323"


class RaisingGetAttribute:
    def __getattribute__(self, name: str) -> Any:
        raise Boom(name)


class ExceptionWithoutName(Exception, metaclass=NamelessMeta):
    pass


class RaisesNamelessError(Mapping):
    def __getitem__(self, key: str) -> Any:
        raise ExceptionWithoutName()

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0


class NamelessObject(metaclass=NamelessMeta):
    pass


def str_class(name: str, **methods: Any) -> type[str]:
    return type(name, (str,), methods)


def int_class(name: str, **methods: Any) -> type[int]:
    return type(name, (int,), methods)


STR_CLASSES = [
    str_class("LyingStrip", strip=lambda self, *a: "Final: 323"),
    str_class("RaisingStrip", strip=boom),
    str_class("LyingSplit", split=lambda self, *a: ["Final:", "323"], splitlines=lambda s, *a: []),
    str_class("LyingIsascii", isascii=lambda self: True),
    str_class("LyingStartswith", startswith=lambda self, *a: True, lstrip=lambda s, *a: "323"),
    str_class("EqualsEverything", __eq__=lambda self, other: True, __ne__=lambda s, o: False,
              __hash__=lambda self: 0),
    str_class("RaisingDunders", __eq__=boom, __hash__=boom, __len__=boom, __iter__=boom,
              __contains__=boom, __getitem__=boom, __str__=boom, __bool__=boom),
    str_class("RaisingEverything", __getattribute__=boom),
    NamelessMeta("NamelessStrByMeta", (str,), {}),
]
INT_CLASSES = [
    int_class("RaisingEq", __eq__=boom, __ne__=boom, __hash__=boom),
    int_class("LyingEq", __eq__=lambda self, other: True, __hash__=lambda self: 0),
    int_class("LyingInt", __int__=lambda self: 323, __index__=lambda self: 323),
    int_class("RaisingInt", __int__=boom, __index__=boom, __abs__=boom, __lt__=boom,
              __gt__=boom, __le__=boom, __ge__=boom, __neg__=boom),
    int_class("RaisingEverything", __getattribute__=boom),
    NamelessMeta("NamelessInt", (int,), {}),
]


# -- 1. one regression test per bug class ---------------------------------------------------------

# Hostile objects are built inside each test: pytest and hypothesis themselves would trip over
# some of them (`isinstance` on a FakeClass raises), so the parameters are factories.
@pytest.mark.parametrize("make_example", [
    RaisingMapping,                            # Mapping.get -> __getitem__ raises
    lambda: RaisingGet(expected_answer=323),   # dict subclass whose get raises
    lambda: {CollidingKey(): 323},             # a plain dict whose lookup raises
    FakeClass,                                 # isinstance(example, Mapping) raises
    RaisingGetAttribute,
    RaisesNamelessError,                       # raises an error whose class has no name
], ids=["mapping-getitem", "dict-get", "colliding-key", "fake-class", "getattribute",
        "nameless-error"])
def test_an_example_that_raises_when_read_is_an_invalid_example(make_example):
    # Bug class 1a: reading the example crashed score(). Now: reported as a dataset bug.
    result = score(make_example(), "Final: 323")
    assert_well_formed(result)
    assert result["details"]["code"] == "invalid_example"
    assert result["details"]["checks"] == ()


@pytest.mark.parametrize(("completion", "code"), [
    (STR_CLASSES[0]("garbage"), "no_final_prefix"),     # used to earn reward 1.0
    (STR_CLASSES[1]("Final: 323"), "correct"),          # used to crash
    # Guards: the old code reached only `strip` of the subclass itself; keep it that way.
    (STR_CLASSES[4]("nonsense"), "no_final_prefix"),
    (STR_CLASSES[5]("Final: 324"), "wrong_answer"),
    (STR_CLASSES[6]("Final: 323"), "correct"),
    (STR_CLASSES[7]("Final: 323"), "correct"),          # used to crash (`.strip` lookup)
], ids=["lying-strip", "raising-strip", "lying-startswith", "equals-everything",
        "raising-dunders", "raising-getattribute"])
def test_a_str_subclass_is_scored_by_its_characters_not_its_methods(completion, code):
    # Bug class 1b: score() called the subclass's own methods, which could crash it or buy a
    # reward. Now it scores an exact str copy: same characters, same result, nothing else.
    result = score(DEV_001, completion)
    assert result == score(DEV_001, str.__str__(completion))
    assert result["details"]["code"] == code


@pytest.mark.parametrize("make_completion", [
    PretendsToBeStr,       # isinstance(x, str) is True; its strip used to earn reward 1.0
    FakeClass,             # isinstance(x, str) raised
    NamelessObject,        # the not_a_string message crashed on type(x).__name__
    lambda: INT_CLASSES[-1](323),
], ids=["pretends-to-be-str", "fake-class", "nameless-class", "nameless-int"])
def test_an_object_that_is_not_a_str_is_not_a_string_whatever_it_claims(make_completion):
    # Bug class 1c: check 1 asked the object (`isinstance` reads `__class__`); now it asks the
    # object's real class, which cannot lie.
    result = score(DEV_001, make_completion())
    assert_well_formed(result)
    assert result["details"]["code"] == "not_a_string"


@pytest.mark.parametrize("expected", [
    LIMIT, -LIMIT, LIMIT + 1, 10**(MAX_DIGITS + 5), -(10**5000),
], ids=["10**640", "-10**640", "10**640+1", "645 digits", "5001 digits"])
def test_an_expected_answer_longer_than_any_answer_is_an_invalid_example(expected):
    # Bug class 2: every correct answer used to score integer_too_long, a dataset bug that
    # looked like a model failure. Now the code names the example.
    result = score({"expected_answer": expected}, "Final: 1" + "0" * MAX_DIGITS)  # 10**640
    assert result["reward"] == 0.0
    assert result["details"]["code"] == "invalid_example"
    assert f"more than {MAX_DIGITS} digits" in result["details"]["message"]


@pytest.mark.parametrize("expected", [
    "\u0663",                    # Arabic-Indic three: int() takes it, the spec does not
    "\uff13",                    # fullwidth three
    "+3", "03", "-0", " 3", "3 ", "3_0", "", "-", "3.0",
    "9" * (MAX_DIGITS + 1),      # out of range: more digits than any answer may have
])
def test_course_score_expected_follows_the_spec_integer_rule(expected, capsys):
    # Bug class 3: `--expected` used argparse's int(), which accepts what the spec refuses.
    with pytest.raises(SystemExit) as stopped:
        main(["score", "--expected", expected, "Final: 3"])
    err = capsys.readouterr().err
    assert stopped.value.code == 2
    error_lines = [line for line in err.splitlines() if "error" in line]
    assert len(error_lines) == 1 and "argument --expected" in error_lines[0]
    assert "Traceback" not in err


@pytest.mark.parametrize("expected", ["3", "-3", "0", "9" * MAX_DIGITS, "-" + "9" * MAX_DIGITS])
def test_course_score_expected_accepts_every_spec_integer(expected, capsys):
    assert main(["score", "--expected", expected, f"Final: {expected}"]) == 0
    assert capsys.readouterr().out.startswith("reward 1.0  code correct  ")


# -- 2. the versioning argument: no decision on a valid example changed ---------------------------

def strict_v1_as_it_was(example: dict, completion: Any) -> tuple[float, str]:
    """A frozen copy of how `score` decided before the change, for exact `dict` examples and
    non-hostile completions (`parse` itself is unchanged for an exact str)."""
    expected = example.get("expected_answer")
    if type(expected) is not int:
        return 0.0, "invalid_example"
    if not isinstance(completion, str):
        return 0.0, "not_a_string"
    parsed, failed, _ = parse(completion)
    if parsed is None:
        codes = {"non_empty": "empty", "single_line": "multiple_lines",
                 "ascii_only": "non_ascii_character", "final_prefix": "no_final_prefix",
                 "single_space": "bad_separator", "integer_syntax": "not_an_integer",
                 "canonical_integer": "non_canonical_integer", "digit_limit": "integer_too_long"}
        return 0.0, codes[failed]
    return (1.0, "correct") if parsed == expected else (0.0, "wrong_answer")


in_range = st.one_of(st.integers(-10**6, 10**6), st.integers(-LIMIT + 1, LIMIT - 1),
                     st.sampled_from([LIMIT - 1, -LIMIT + 1, 0]))
out_of_range = st.one_of(st.integers(LIMIT, 10 * LIMIT), st.integers(-10 * LIMIT, -LIMIT),
                         st.sampled_from([LIMIT, -LIMIT]))


def answers_for(expected: int) -> st.SearchStrategy[Any]:
    """Completions worth trying against `expected`: its own canonical line, near misses, noise."""
    return st.one_of(
        st.just(f"Final: {expected}"), st.just(f"Final: {expected}\n"),
        st.just(f"Final: {expected}"[:MAX_DIGITS + 7]),
        st.integers().map(lambda n: f"Final: {n}"), st.text(max_size=20),
        st.none(), st.binary(max_size=8), st.integers(),
    )


@FUZZ
@given(in_range, st.data())
@example(LIMIT - 1, None).via("the longest positive answer")
@example(-LIMIT + 1, None).via("the longest negative answer")
def test_for_answerable_examples_every_decision_is_as_before(expected, st_data):
    """|expected_answer| < 10**MAX_DIGITS: reward and code are exactly what they were."""
    if st_data is None:  # an explicit edge: its own canonical line, and one digit too many
        completions: list[Any] = [f"Final: {expected}", f"Final: {expected}9"]
    else:
        completions = [st_data.draw(answers_for(expected))]
    example = {"id": "x", "expected_answer": expected}
    for completion in completions:
        result = score(example, completion)
        assert (result["reward"], result["details"]["code"]) == strict_v1_as_it_was(
            example, completion)


@FUZZ
@given(out_of_range, st.data())
def test_an_out_of_range_example_was_never_answerable(expected, st_data):
    """The changed decision: before, no completion could earn reward 1 on such an example
    (answers are capped at MAX_DIGITS digits); now the code says why. Rewards are unchanged."""
    completion = st_data.draw(answers_for(expected))
    example = {"id": "x", "expected_answer": expected}
    before = strict_v1_as_it_was(example, completion)
    result = score(example, completion)
    assert before[0] == result["reward"] == 0.0
    assert result["details"]["code"] == "invalid_example"


def committed_examples() -> Iterator[tuple[str, dict]]:
    for name in ("dev", "holdout"):
        yield from ((name, r) for r in load_problems(DATA_DIR / "problems" / f"{name}.jsonl"))
    for name in ("correct", "exploits"):
        yield from ((name, r) for r in load_golden(DATA_DIR / "golden" / f"{name}.jsonl"))
    for path in sorted((DATA_DIR / "kata").glob("*.jsonl")):
        yield from ((path.stem, r) for r in load_kata(path))
    for path in sorted(RUNS_DIR.glob("run_*/*.jsonl")):
        yield from ((path.parent.name, r) for _, r in read_jsonl(path) if "expected_answer" in r)


def test_no_committed_example_is_touched_by_the_change():
    """Every example the course ships or has measured is answerable, so no committed number
    can move (`course runs verify` checks the runs byte for byte)."""
    examples = list(committed_examples())
    assert len(examples) > 200
    assert all(abs(r["expected_answer"]) < LIMIT for _, r in examples)
    longest = max(len(str(abs(r["expected_answer"]))) for _, r in examples)
    assert longest == MAX_DIGITS  # the golden set already holds the longest answerable example


def test_every_recorded_decision_still_stands():
    """The decision table and both golden files get exactly their recorded codes."""
    other = {"negative answer": -42, "zero": 0}
    for case, completion, code, _ in SPEC_DECISIONS:
        assert score({"expected_answer": other.get(case, 323)}, completion)["details"]["code"] \
            == code, case
    for record in load_golden(DATA_DIR / "golden" / "correct.jsonl"):
        assert score(record, record["completion"])["details"]["code"] == "correct"
    for record in load_golden(DATA_DIR / "golden" / "exploits.jsonl"):
        assert score(record, record["completion"])["details"]["code"] == record["expected_code"]


# -- 3. fuzzing with hostile objects --------------------------------------------------------------

class Recipe:
    """How to build one value, and how to show it. Hypothesis inspects what it draws
    (`isinstance`, `repr`) and some hostile objects are made to break exactly that, so the
    strategies draw recipes and each test builds the values itself."""

    def __init__(self, shown: str, build: Any) -> None:
        self.shown, self.build = shown, build

    def __repr__(self) -> str:
        return self.shown


def plain(value: Any) -> Recipe:
    return Recipe(repr(value), lambda: value)


def instance_of(cls: type, arg: Any) -> Recipe:
    name = type.__dict__["__name__"].__get__(cls)  # some of these classes hide their __name__
    return Recipe(f"{name}({arg!r})", lambda: cls(arg))


def keyed(key: Any, value: Recipe) -> Recipe:
    return Recipe(f"{{{key!r}: {value!r}}}", lambda: {key: value.build()})


any_text = st.text(st.characters(exclude_categories=()), max_size=40)  # surrogates included
near_misses = st.text(st.sampled_from("Final: -+0123456789\n\r\t\u00a0\u2212\u200b\u0663\ud800"),
                      max_size=20)
texts = st.one_of(any_text, near_misses, st.integers().map(lambda n: f"Final: {n}"))
plain_values = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(), st.binary(max_size=10), texts,
    st.lists(st.integers(), max_size=3), st.dictionaries(texts, st.integers(), max_size=3),
).map(plain)
hostile_strs = st.builds(instance_of, st.sampled_from(STR_CLASSES), texts)
hostile_ints = st.builds(instance_of, st.sampled_from(INT_CLASSES), st.integers())
hostile_objects = st.sampled_from([
    RaisingMapping, RaisingGet, FakeClass, PretendsToBeStr, RaisingGetAttribute,
    RaisesNamelessError, NamelessObject, object,
]).map(lambda cls: Recipe(f"{cls.__qualname__}()", cls))
anything = st.one_of(plain_values, hostile_strs, hostile_ints, hostile_objects)
examples = st.one_of(
    st.builds(keyed, st.just("expected_answer"),
              st.one_of(in_range.map(plain), out_of_range.map(plain), hostile_ints, anything)),
    st.builds(keyed, st.one_of(texts, st.integers()), anything),   # any key, any value
    st.integers().map(lambda n: Recipe(f"RaisingGet(expected_answer={n})",
                                       lambda: RaisingGet(expected_answer=n))),
    st.integers().map(lambda n: Recipe(f"{{CollidingKey(): {n}}}", lambda: {CollidingKey(): n})),
    anything,
)


@FUZZ
@given(examples, anything)
def test_score_is_total_for_any_example_and_any_completion(example, completion):
    assert_well_formed(score(example.build(), completion.build()))


@FUZZ
@given(st.sampled_from(STR_CLASSES), texts, st.one_of(in_range, st.integers(-999, 999)))
def test_a_str_subclass_gets_the_result_of_the_exact_str(cls, text, expected):
    example = {"expected_answer": expected}
    exact = score(example, text)
    assert score(example, cls(text)) == exact
    assert_well_formed(exact)
