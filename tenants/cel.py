"""CEL (the Common Expression Language Kubernetes uses for admission policies), evaluated
with cel-python: compiled once, checked on sample input before it is saved, and bounded
twice as Kubernetes bounds it: an estimated cost refused when a condition is written, and a
budget per evaluation (a condition over it fails) so that no rule holds a web worker.
"""

from __future__ import annotations

import functools
import re
import time
from typing import Any

import celpy
import lark
from celpy import CELEvalError, CELParseError
from celpy.evaluation import Evaluator

# What a condition may be (docs/security.md, "Rules are bounded"):
MAX_LENGTH = 2_000  # characters
MAX_DEPTH = 200  # levels of the parsed expression (a parenthesis or an operator is about ten)
# Evaluation steps (one per node of the expression visited): estimated before saving, counted
# while evaluating. 10,000 is two comprehensions over ten items each with room to spare.
MAX_COST = 10_000
# And however the steps go, no evaluation runs longer than this.
MAX_SECONDS = 0.25
# A list whose length the text does not say (request.tiers, request.requester_groups) is
# estimated at this many items.
ESTIMATED_LIST_SIZE = 20
# The macros that evaluate their body once per item of what they are called on.
COMPREHENSIONS = frozenset({"all", "exists", "exists_one", "map", "filter"})
# Operators as the parser names them, for errors people read.
_OPERATORS = {
    "addition_add": "+",
    "addition_sub": "-",
    "multiplication_mul": "*",
    "multiplication_div": "/",
    "multiplication_mod": "%",
    "relation_lt": "<",
    "relation_le": "<=",
    "relation_gt": ">",
    "relation_ge": ">=",
    "relation_eq": "==",
    "relation_ne": "!=",
    "relation_in": "in",
    "unary_not": "!",
    "unary_neg": "-",
}


class ConditionTooCostly(ValueError):
    """A condition past one of the bounds above, saying which."""


class OverBudget(CELEvalError):
    """An evaluation past its budget: the condition counts as failed."""


class _OverBudget(Exception):
    """Raised inside an evaluation past its budget: no CEL operator may absorb it."""


class _BudgetedEvaluator(Evaluator):
    """cel-python's evaluator counting the nodes it visits, its macros' included."""

    def __init__(self, ast: lark.Tree, activation, budget: list[float] | None = None) -> None:
        super().__init__(ast, activation)
        # [steps left, deadline]: shared with the evaluators of the macros' bodies.
        self.budget = budget if budget is not None else [MAX_COST, time.monotonic() + MAX_SECONDS]

    def sub_evaluator(self, ast: lark.Tree) -> Evaluator:
        return _BudgetedEvaluator(ast, self.activation, self.budget)

    def visit_children(self, tree: lark.Tree):
        self.budget[0] -= 1
        if self.budget[0] < 0 or (self.budget[0] % 64 == 0 and time.monotonic() > self.budget[1]):
            raise _OverBudget
        return super().visit_children(tree)


class _BudgetedRunner(celpy.InterpretedRunner):
    def evaluate(self, context):
        return _BudgetedEvaluator(self.ast, self.new_activation()).evaluate(context)


@functools.cache
def environment() -> celpy.Environment:
    """The one CEL environment, built at first use: building its parser (a LALR table)
    takes most of a second, which every process would otherwise pay at start."""
    return celpy.Environment(runner_class=_BudgetedRunner)


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
    (`what` names the condition, `allowed` what it may use) unless it gives true or false
    within the bounds."""
    try:
        program = environment().program(parse_bounded(condition))
    except CELParseError as exc:
        raise error(f"{what} does not compile: {_parse_problem(exc, condition)}") from exc
    except ConditionTooCostly as exc:
        raise error(f"{what} {exc}") from exc
    result = evaluate(program, sample)
    if isinstance(result, CELEvalError):
        raise error(f"{what} cannot be evaluated ({describe(result)}); {allowed}.")
    if not isinstance(result, celpy.celtypes.BoolType):
        raise error(f"{what} must be true or false, not {type(result).__name__}.")
    return program


def parse_bounded(condition: str) -> lark.Tree:
    """The parsed condition; ConditionTooCostly past a bound, CELParseError if it is not CEL."""
    if len(condition) > MAX_LENGTH:
        raise ConditionTooCostly(
            f"is {len(condition)} characters long; at most {MAX_LENGTH} are allowed."
        )
    try:
        tree = environment().compile(condition)
    except RecursionError as exc:
        raise ConditionTooCostly(
            f"is nested too deeply; at most {MAX_DEPTH} levels are allowed."
        ) from exc
    if (depth := _depth(tree)) > MAX_DEPTH:
        raise ConditionTooCostly(f"is nested {depth} levels deep; at most {MAX_DEPTH} are allowed.")
    if (cost := estimated_cost(tree)) > MAX_COST:
        raise ConditionTooCostly(
            f"would take about {cost:,} evaluation steps; at most {MAX_COST:,} are allowed "
            "(each comprehension — all, exists, exists_one, map, filter — repeats its body "
            f"once per item; a list of unknown length counts as {ESTIMATED_LIST_SIZE})."
        )
    return tree


def _depth(tree: lark.Tree) -> int:
    deepest, stack = 0, [(tree, 1)]
    while stack:
        node, level = stack.pop()
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in node.children if isinstance(child, lark.Tree))
    return deepest


def estimated_cost(tree: lark.Tree) -> int:
    """The evaluation steps the condition takes at most: one per node, a comprehension's
    body counted once per item of the list it runs over."""
    if tree.data == "member_dot_arg" and _macro_name(tree) in COMPREHENSIONS:
        target, _, arguments = tree.children
        bodies = [child for child in arguments.children[1:] if isinstance(child, lark.Tree)]
        return (
            1
            + estimated_cost(target)
            + _list_size(target) * sum(estimated_cost(body) + 1 for body in bodies)
        )
    return 1 + sum(estimated_cost(child) for child in tree.children if isinstance(child, lark.Tree))


def _macro_name(tree: lark.Tree) -> str:
    if len(tree.children) == 3 and isinstance(tree.children[1], lark.Token):
        return str(tree.children[1])
    return ""


def _list_size(target: lark.Tree) -> int:
    """The length of the list a comprehension runs over, where the text says it."""
    node = target
    while (
        isinstance(node, lark.Tree)
        and len(node.children) == 1
        and node.data
        in (
            "member",
            "primary",
        )
    ):
        node = node.children[0]
    if isinstance(node, lark.Tree):
        if node.data in ("list_lit", "map_lit"):
            return len(node.children[0].children) if node.children else 0
        if node.data == "member_dot_arg" and _macro_name(node) in ("map", "filter"):
            return _list_size(node.children[0])
    return ESTIMATED_LIST_SIZE


def describe(error: CELEvalError) -> str:
    """A CEL evaluation error as a person reads it: operators and types named as CEL names
    them, not as the interpreter does."""
    text = str(error.args[0]) if error.args else "failed"
    if isinstance(error, OverBudget):
        return text
    text = re.sub(r"Token\('RULE', '(\w+)'\)", lambda m: repr(_OPERATORS.get(m[1], m[1])), text)
    text = re.sub(r"<class 'celpy\.celtypes\.(\w+?)(?:Type)?'>", lambda m: m[1].lower(), text)
    return text.replace("no such member in mapping", "no such attribute")


def activation(variables: dict[str, Any]):
    """`variables` converted to CEL values once, for evaluating many programs on them."""
    return celpy.json_to_cel(variables)


def evaluate_converted(program, converted):
    """As `evaluate`, on variables `activation` already converted."""
    try:
        return program.evaluate(converted)
    except CELEvalError as error:
        return error
    except _OverBudget:
        return OverBudget(
            f"it took more than {MAX_COST:,} evaluation steps or {MAX_SECONDS} s, "
            "the budget of one evaluation, and counts as failed"
        )
    except RecursionError:
        return OverBudget("it is nested too deeply to evaluate, and counts as failed")


def _parse_problem(error: CELParseError, condition: str) -> str:
    """Where the parser stopped, and the text there."""
    line, column = getattr(error, "line", None), getattr(error, "column", None)
    if not (line and column):
        return "syntax error."
    rest = condition.splitlines()[line - 1][column - 1 :] if condition.strip() else ""
    there = f" near {rest[:20]!r}" if rest.strip() else " at the end"
    return f"syntax error at line {line}, column {column}{there}."


def attributes_read(condition: str, variable: str) -> frozenset[str] | None:
    """The attributes of `variable` the condition reads, when it reads `variable` only as
    `variable.name`; None when it uses it any other way (whole, indexed, or a macro's own
    variable of that name), or does not compile. A result then depends on those alone."""
    try:
        tree = parse_bounded(condition)
    except (CELParseError, ConditionTooCostly):
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
