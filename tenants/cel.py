"""CEL (the Common Expression Language Kubernetes uses for admission policies), evaluated
with cel-python: compiled once, checked on sample input before it is saved."""

from __future__ import annotations

from typing import Any

import celpy
from celpy import CELEvalError, CELParseError

_environment = celpy.Environment()


def evaluate(program, activation: dict[str, Any]):  # noqa: ANN001, ANN201 - celpy types
    """The result, or the CELEvalError (raised or returned, depending on where it fails)."""
    try:
        return program.evaluate(celpy.json_to_cel(activation))
    except CELEvalError as error:
        return error


def compile_checked(
    condition: str, *, sample: dict[str, Any], what: str, allowed: str,
    error: type[Exception],
):  # noqa: ANN201 - a celpy Runner
    """Compile `condition` and try it on `sample`; raise `error` saying what is wrong
    (`what` names the condition, `allowed` what it may use) unless it gives true or false."""
    try:
        program = _environment.program(_environment.compile(condition))
    except CELParseError as exc:
        raise error(f"{what} does not compile: {exc}") from exc
    result = evaluate(program, sample)
    if isinstance(result, CELEvalError):
        raise error(
            f"{what} cannot be evaluated ({result.args[0] if result.args else result}); "
            f"{allowed}."
        )
    if not isinstance(result, celpy.celtypes.BoolType):
        raise error(f"{what} must be true or false, not {type(result).__name__}.")
    return program
