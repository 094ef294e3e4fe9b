"""Property-based tests of the scorer contract: total, deterministic, explainable, consistent."""

from hypothesis import example, given
from hypothesis import strategies as st

from course.scorer import ASCII_WHITESPACE, CODES, MAX_DIGITS, score

EXAMPLE = {"prompt": "Compute 17*19. Output exactly one line: Final: <int>",
           "expected_answer": 323}

anything = st.one_of(
    st.none(), st.text(), st.binary(), st.integers(), st.floats(), st.booleans(),
    st.lists(st.text(max_size=5), max_size=3), st.dictionaries(st.text(max_size=3), st.integers()),
    st.text(alphabet=st.sampled_from("Final: -+0123456789\n\r\t\u00a0\u2212\u200b"), max_size=30),
)


def assert_well_formed(result):
    assert set(result) == {"reward", "details"}
    assert result["reward"] in (0.0, 1.0)
    assert result["details"]["code"] in CODES
    assert (result["details"]["code"] == "correct") == (result["reward"] == 1.0)


@given(anything)
@example("x" * 1_000_000)
@example("Final: " + "7" * 1_000_000)
@example("\u2028" * 1000)
def test_total_for_any_value(completion):
    assert_well_formed(score(EXAMPLE, completion))


@given(anything)
def test_deterministic(completion):
    assert score(EXAMPLE, completion) == score(EXAMPLE, completion)


@given(st.integers(min_value=-(10**MAX_DIGITS) + 1, max_value=10**MAX_DIGITS - 1))
def test_the_canonical_spelling_of_any_integer_is_correct(n):
    result = score({"expected_answer": n}, f"Final: {n}")
    assert result["reward"] == 1.0
    assert result["details"]["parsed_answer"] == n


@given(st.integers(-10**6, 10**6), st.text(alphabet=ASCII_WHITESPACE),
       st.text(alphabet=ASCII_WHITESPACE))
def test_surrounding_ascii_whitespace_never_matters(n, before, after):
    assert score({"expected_answer": n}, f"{before}Final: {n}{after}")["reward"] == 1.0


@given(st.integers(-10**6, 10**6), st.integers(-10**6, 10**6))
def test_only_the_expected_integer_earns_reward(n, m):
    result = score({"expected_answer": n}, f"Final: {m}")
    assert result["reward"] == (1.0 if n == m else 0.0)
    assert result["details"]["parsed_answer"] == m


@given(st.integers(-999, 999), st.characters(min_codepoint=0x80), st.data())
def test_any_non_ascii_character_inside_the_line_is_rejected(n, char, data):
    line = f"Final: {n}"
    at = data.draw(st.integers(0, len(line)))
    mutated = line[:at] + char + line[at:]
    result = score({"expected_answer": n}, mutated)
    assert result["reward"] == 0.0
    assert result["details"]["code"] in {"non_ascii_character", "multiple_lines"}
