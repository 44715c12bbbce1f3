"""Every public name has a docstring in one style — Google style, with Markdown, as
mkdocstrings renders it — and every operator a marble diagram, as RxPY's operators have.

Public: each name in ``llm_rx.__all__``, ``llm_rx.operators.__all__``, ``llm_rx.sinks.__all__``
and ``llm_rx.wire.__all__``, and the public methods and properties of those classes.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import llm_rx
from llm_rx import operators, sinks, wire

MODULES = (llm_rx, operators, sinks, wire)
SECTION = re.compile(r"^(Args|Returns|Yields|Raises|Attributes|Example|Examples|Note):\s*$")
ARG = re.compile(r"^\*{0,2}(\w+)( \([^)]*\))?:( |$)")
RST = re.compile(r":(class|func|meth|data|mod|attr|exc|obj|param|returns?|raises?|r?type):")
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
TIMELINE = re.compile(r"-[^\s]*[|#]|--")


def _own_doc(owner: Any, cls: type | None = None) -> str | None:
    doc = vars(owner).get("__doc__") if inspect.isclass(owner) else owner.__doc__
    if not doc and cls is not None:  # a method overriding a documented one of an llm_rx
        for base in cls.__mro__[1:]:  # base keeps its contract: its doc is the base's, as
            found = vars(base).get(owner.__name__)  # help() reads it (a decoder's decode)
            if base.__module__.startswith("llm_rx") and getattr(found, "__doc__", None):
                doc = found.__doc__
                break
    if not doc or (inspect.isclass(owner) and doc.startswith(f"{owner.__name__}(")):
        return None  # (a NamedTuple's generated "Name(field, ...)" is no docstring)
    return inspect.cleandoc(doc)


def _members(cls: type) -> Iterator[tuple[str, Callable[..., Any]]]:
    for name, value in vars(cls).items():
        if name.startswith("_") and name != "__init__":
            continue
        if isinstance(value, property):
            value = value.fget
        elif isinstance(value, classmethod | staticmethod):
            value = value.__func__
        if inspect.isfunction(value) and value.__module__.startswith("llm_rx"):
            yield name, value


def _public() -> Iterator[tuple[str, Any]]:
    for module in MODULES:
        for name in module.__all__:
            value = getattr(module, name)
            if inspect.isclass(value) or inspect.isfunction(value):
                yield f"{module.__name__}.{name}", value
            if inspect.isclass(value):
                for member, function in _members(value):
                    yield f"{module.__name__}.{name}.{member}", function
                    OWNER[function] = value


OWNER: dict[Any, type] = {}  # a method -> the class it is public on
PUBLIC = dict(_public())

def _parameters(function: Callable[..., Any]) -> list[str]:
    return [name for name in inspect.signature(function).parameters if name not in {"self", "cls"}]


def _documented_args(doc: str) -> list[str] | None:
    lines = doc.splitlines()
    if "Args:" not in lines:
        return None
    names = []
    for line in lines[lines.index("Args:") + 1:]:
        if line.strip() and not line.startswith(" "):
            break
        match = ARG.match(line[4:]) if line.startswith("    ") and line[4] != " " else None
        if match:
            names.append(match.group(1))
    return names


def _is_operator(function: Any) -> bool:
    if not inspect.isfunction(function):
        return False
    return str(inspect.signature(function).return_annotation).startswith("Callable[[Observable")


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_public_name_has_a_google_style_docstring(name: str) -> None:
    value = PUBLIC[name]
    if name.endswith(".__init__"):  # (a constructor's arguments: on it or on its class)
        owner = PUBLIC[name.rsplit(".", 1)[0]]
        doc = "\n".join(filter(None, (_own_doc(owner), _own_doc(value, OWNER[value]))))
    else:
        found = _own_doc(value, OWNER.get(value))
        assert found, f"{name} has no docstring"
        doc = found
        first = doc.splitlines()[0]
        assert (first.strip() and first[0].isupper()) or first[0] in "`[", (
            f"{name}: the summary line should be a sentence: {first!r}")
    assert not RST.search(doc), f"{name}: a reST role; write Markdown (`code`, [name][path])"
    for line in doc.splitlines():
        assert not line.rstrip().endswith("::"), f"{name}: a reST literal block; use a fence"
        assert not line.startswith(".. "), f"{name}: a reST directive: {line!r}"
        assert not SECTION.match(line.strip()) or SECTION.match(line), (
            f"{name}: a section heading must start its line: {line!r}")
    if inspect.isfunction(value) and _parameters(value):
        documented = _documented_args(doc)
        assert documented == _parameters(value), (
            f"{name}: Args: should name {_parameters(value)} in order, not {documented}")


@pytest.mark.parametrize("name", sorted(n for n, v in PUBLIC.items() if _is_operator(v)))
def test_operator_has_a_marble_diagram(name: str) -> None:
    short = name.rsplit(".", 1)[1]
    doc = _own_doc(PUBLIC[name]) or ""
    for language, block in FENCE.findall(doc):
        lines = block.splitlines()
        at = [i for i, line in enumerate(lines) if f"{short}(" in line and not TIMELINE.search(
            line.split(f"{short}(")[0])]
        if language == "text" and at and any(TIMELINE.search(line) for line in lines[:at[0]]) \
                and any(TIMELINE.search(line) for line in lines[at[0] + 1:]):
            return
    pytest.fail(f"{name}: no marble diagram (a ```text block: a timeline, {short}(), a timeline)")
