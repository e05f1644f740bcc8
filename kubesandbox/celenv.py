"""The CEL environment shared by ValidatingAdmissionPolicies and CRD validation rules
(``cel-python``), with some of the Kubernetes string library, cel-go's answers where
cel-python's differ, and the ``authorizer`` functions (``celauthz``)."""

from __future__ import annotations

import functools
from typing import Any

import celpy
from celpy import CELEvalError, celtypes

from . import celauthz


def _lower(s: Any) -> Any:
    return celtypes.StringType(str(s).lower())


def _upper(s: Any) -> Any:
    return celtypes.StringType(str(s).upper())


def _trim(s: Any) -> Any:
    return celtypes.StringType(str(s).strip())


def _split(s: Any, sep: Any) -> Any:
    return celtypes.ListType([celtypes.StringType(p) for p in str(s).split(str(sep))])


def _join(items: Any, sep: Any = "") -> Any:
    return celtypes.StringType(str(sep).join(str(i) for i in items))


def _replace(s: Any, old: Any, new: Any) -> Any:
    return celtypes.StringType(str(s).replace(str(old), str(new)))


def _index_of(s: Any, sub: Any) -> Any:
    return celtypes.IntType(str(s).find(str(sub)))


def _not_equal(a: Any, b: Any) -> Any:
    """`!=` with null on either side, as cel-go (heterogeneous equality) answers it:
    `oldObject != null` is how a policy asks whether a request has an old object, and
    cel-python raises "no such overload" for a map or list against null."""
    if a is None or b is None:
        return celtypes.BoolType(a is not b)
    return celpy.evaluation.bool_ne(a, b)


def _string(value: Any) -> Any:
    """`string()`, with a bool spelt as cel-go spells it (true, not Python's True)."""
    if isinstance(value, celtypes.BoolType):
        return celtypes.StringType("true" if value else "false")
    return celtypes.StringType(value)


_FUNCTIONS = {
    "string": _string,
    "lowerAscii": _lower,
    "upperAscii": _upper,
    "trim": _trim,
    "split": _split,
    "join": _join,
    "replace": _replace,
    "indexOf": _index_of,
    "_!=_": _not_equal,
    **celauthz.FUNCTIONS,
}
_ENV = celpy.Environment()


@functools.lru_cache(maxsize=512)
def _program(expression: str) -> Any:
    return _ENV.program(_ENV.compile(expression), functions=_FUNCTIONS)


class EvalError(Exception):
    """An expression that would not compile or evaluate (or, to `is_true`, not to a bool)."""


def evaluate(expression: str, activation: dict) -> Any:
    try:
        result = _program(expression).evaluate(activation)
    except CELEvalError as error:
        raise EvalError(str(error.args[0] if error.args else error)) from error
    except Exception as error:  # compile errors, type errors inside cel-python
        raise EvalError(str(error)) from error
    if isinstance(result, CELEvalError):
        raise EvalError(str(result.args[0] if result.args else result))
    return result


def is_true(expression: str, activation: dict) -> bool:
    result = evaluate(expression, activation)
    if not isinstance(result, celtypes.BoolType):
        raise EvalError(f"expression must return bool, not {type(result).__name__}")
    return bool(result)
