"""Command-line options made from a config dataclass, so that each option has one source.

A lesson's config (`course.bandit.BanditConfig`, `course.mdp.MDPConfig`, ...) states every
setting once: its name, type and default in the field, what it means and its range in the
docstring under it. `add_options` makes the option of each field a command exposes from exactly
that: `--batch-size` from `batch_size`, its type and default from the field, its help from the
docstring (a constant it names in backticks, such as `MAX_STEPS`, shown with its value), and the
values it may take, listed in its help unless the docstring names them, from the field's
metadata (`field(metadata={"choices": ...})`). `config_of` builds the config back from the
parsed values, and the config's own checks refuse a bad one, choices included, in one line
(`course.commands.options.make_config`), so that every refusal reads the same.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import inspect
import re
import sys
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from course.commands.options import Output, make_config, output_of
from course.paths import display_path

C = TypeVar("C")
Options = argparse.ArgumentParser | argparse._ArgumentGroup
"""Where options are added: a command's parser, or a group of its options."""

_NAMED_CONSTANT = re.compile(r"`([A-Z][A-Z0-9_]*)`")
"""A module constant named in a docstring, in backticks."""


_FIELD = re.compile(r'^    (\w+): [^\n]*\n    """(.*?)"""', re.MULTILINE | re.DOTALL)
"""A field of a config's body on one line, and the docstring on the lines under it."""
_TOP_LEVEL = re.compile(r"^\S", re.MULTILINE)
"""The first line after a class's body: one that does not start with a space."""


@functools.cache
def field_docs(config: type) -> dict[str, str]:
    """Each field's docstring, on one line: the string under the field in the class's source.
    A constant of the config's module named in backticks is replaced by its value (`1 to
    MAX_STEPS` reads `1 to 10,000`); other backticks are dropped.

    Read with a pattern, not by parsing the module: every `course` command builds its parser at
    start-up, and `inspect.getsource` with `ast` made that 0.2 s slower; tests/test_cli.py
    holds the pattern against `ast` on every config the command line reads."""
    module = sys.modules[config.__module__]
    source = Path(inspect.getsourcefile(config) or "").read_text(encoding="utf-8")
    head = re.search(rf"^class {config.__name__}\b.*$", source, re.MULTILINE)
    assert head is not None, config
    end = _TOP_LEVEL.search(source, head.end() + 1)
    body = source[head.end():end.start() if end else len(source)]

    def shown(match: re.Match[str]) -> str:
        value = getattr(module, match[1], None)
        return f"{value:,}" if isinstance(value, int | float) else match[1]

    return {name: _NAMED_CONSTANT.sub(shown, " ".join(doc.split())).replace("`", "")
            for name, doc in _FIELD.findall(body)}


def option(name: str) -> str:
    """The option of a field: `--batch-size` for `batch_size`."""
    return "--" + name.replace("_", "-")


def add_options(parser: Options, config: type, names: Sequence[str],
                given_only: bool = False) -> None:
    """An option for each field of `config` named in `names`: its type, default (a field
    without one makes a required option), choices and help all read from the field
    (`field_docs`); a `bool` field is a flag. With `given_only`, an option left out parses as
    None (its help still shows the field's default), so that the handler sees what was given."""
    docs = field_docs(config)
    kinds = typing.get_type_hints(config)
    fields = {f.name: f for f in dataclasses.fields(config)}
    for name in names:
        field = fields[name]
        required = field.default is dataclasses.MISSING
        flag = kinds[name] is bool                  # a flag's default is to be left out
        shown = "" if required or flag else f" (default {shown_default(field.default)})"
        default = None if given_only or required else field.default
        text = f"{docs[name]}{_listed(field, docs[name])}{shown}"
        if flag:
            parser.add_argument(option(name), dest=name, action="store_true",
                                default=default, help=text)
        else:
            parser.add_argument(option(name), dest=name, type=_kind(kinds[name]),
                                required=required, default=default, help=text)


def add_shared_options(parser: Options, configs: Mapping[str, type],
                       names: Sequence[str]) -> None:
    """An option for each field that every config of `configs` (by the name a command gives
    it) has, parsed as None when left out: its type and choices from the first config; its
    help the field's docstring, each config's where they differ, and each config's default."""
    docs = {label: field_docs(config) for label, config in configs.items()}
    fields = {label: {f.name: f for f in dataclasses.fields(config)}
              for label, config in configs.items()}
    first = next(iter(configs))
    kinds = typing.get_type_hints(configs[first])
    for name in names:
        said = {label: doc[name] for label, doc in docs.items()}
        defaults = {label: shown_default(by_name[name].default)
                    for label, by_name in fields.items()}
        text = (said[first] if len(set(said.values())) == 1
                else " ".join(f"{label}: {doc}" for label, doc in said.items()))
        text += _listed(fields[first][name], text)
        text += (f" (default {defaults[first]})" if len(set(defaults.values())) == 1
                 else f" (default {', '.join(f'{v} for {k}' for k, v in defaults.items())})")
        parser.add_argument(option(name), dest=name, type=_kind(kinds[name]), default=None,
                            help=text)


def _listed(field: dataclasses.Field[Any], said: str) -> str:
    """The values a field may take (its metadata's `choices`), for its help, unless its
    docstring `said` names them all already."""
    choices = field.metadata.get("choices", ())
    named = [choice for choice in choices if choice not in said]
    return f" One of: {', '.join(choices)}." if named else ""


def _kind(hint: Any) -> Any:
    """What argparse converts an option's text with: the field's type, or for `T | None` T."""
    members = [member for member in typing.get_args(hint) if member is not type(None)]
    return members[0] if isinstance(hint, types.UnionType) and len(members) == 1 else hint


def shown_default(default: Any) -> str:
    """A default as the help shows it: a path from the repository's root."""
    return display_path(default) if isinstance(default, Path) else str(default)


def config_of(config: type[C], values: argparse.Namespace, names: Sequence[str],
              **others: Any) -> C:
    """The config from the parsed options of `names` (and `others`, set by the command); an
    option parsed as None (`given_only`) leaves the field at its default."""
    given = {name: value for name in names if (value := getattr(values, name)) is not None}
    return make_config(config, **given, **others)


def case_handler(config: type[C], names: Sequence[str], attempt: Callable[[str, int], int],
                 main: Callable[[C, Output], int]) -> Callable[[argparse.Namespace], int]:
    """The handler of a command that scores the golden cases (`course rubrics`, `course
    peers`): with `--try TEXT`, `attempt(TEXT, expected)`; else `main` with the config and
    the checked `--out`."""
    def parsed(values: argparse.Namespace) -> int:
        if values.attempt is not None:
            return attempt(values.attempt, values.expected)
        output = output_of(values)
        return main(config_of(config, values, names), output)
    return parsed
