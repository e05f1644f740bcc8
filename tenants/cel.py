"""CEL (the Common Expression Language Kubernetes uses for admission policies), evaluated
with cel-python: compiled once, checked on sample input before it is saved."""

from __future__ import annotations

from typing import Any

import celpy
from celpy import CELEvalError, CELParseError

_environment = celpy.Environment()


def evaluate(program, activation: dict[str, Any]):
    """The result, or the CELEvalError (raised or returned, depending on where it fails)."""
    return evaluate_converted(program, celpy.json_to_cel(activation))


def compile_checked(
    condition: str,
    *,
    sample: dict[str, Any],
    what: str,
    allowed: str,
    error: type[Exception],
):
    """Compile `condition` and try it on `sample`; raise `error` saying what is wrong
    (`what` names the condition, `allowed` what it may use) unless it gives true or false."""
    try:
        program = _environment.program(_environment.compile(condition))
    except CELParseError as exc:
        raise error(f"{what} does not compile: {exc}") from exc
    result = evaluate(program, sample)
    if isinstance(result, CELEvalError):
        raise error(
            f"{what} cannot be evaluated ({result.args[0] if result.args else result}); {allowed}."
        )
    if not isinstance(result, celpy.celtypes.BoolType):
        raise error(f"{what} must be true or false, not {type(result).__name__}.")
    return program


def activation(variables: dict[str, Any]):
    """`variables` converted to CEL values once, for evaluating many programs on them."""
    return celpy.json_to_cel(variables)


def evaluate_converted(program, converted):
    """As `evaluate`, on variables `activation` already converted."""
    try:
        return program.evaluate(converted)
    except CELEvalError as error:
        return error


def attributes_read(condition: str, variable: str) -> frozenset[str] | None:
    """The attributes of `variable` the condition reads, when it reads `variable` only as
    `variable.name`; None when it uses it any other way (whole, indexed, or a macro's own
    variable of that name), or does not compile. A result then depends on those alone."""
    try:
        tree = _environment.compile(condition)
    except CELParseError:
        return None
    uses = sum(
        1
        for token in tree.scan_values(lambda value: True)
        if token == variable and getattr(token, "type", "") == "IDENT"
    )
    names = set()
    for node in tree.iter_subtrees():
        if node.data != "member_dot" or len(node.children) != 2:
            continue
        inner, name = node.children
        if (
            getattr(inner, "data", "") == "member"
            and len(inner.children) == 1
            and getattr(inner.children[0], "data", "") == "primary"
            and len(inner.children[0].children) == 1
            and getattr(inner.children[0].children[0], "data", "") == "ident"
            and inner.children[0].children[0].children == [variable]
        ):
            names.add(str(name))
            uses -= 1
    return frozenset(names) if uses == 0 else None
