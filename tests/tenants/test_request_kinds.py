"""Request kinds live in their registries: every kind is declared on both sides, and no
module outside the registries compares kinds (it asks the registry instead)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from provisioning.inputs.kinds import KINDS as PLAN_KINDS
from provisioning.inputs.kinds import PlanKind, plan_kind_for
from tenants.choices import RequestKind
from tenants.kinds import KINDS, Kind, Target, all_kinds, kind_for, kinds_where

ROOT = Path(__file__).resolve().parents[2]
APPS = ("tenants", "provisioning", "portal")
# The two registries: the only places that may say what one kind does differently.
REGISTRIES = (ROOT / "tenants" / "kinds", ROOT / "provisioning" / "inputs" / "kinds")
KIND_VALUES = frozenset(RequestKind.values)


@pytest.mark.parametrize("value", RequestKind.values)
def test_every_request_kind_is_declared_in_the_domain_registry(value):
    kind = kind_for(value)
    assert isinstance(kind, Kind)
    assert kind.value == value
    assert kind.payload is not None


@pytest.mark.parametrize("value", RequestKind.values)
def test_every_request_kind_has_a_plan_kind_in_the_engine(value):
    kind = plan_kind_for(value)
    assert isinstance(kind, PlanKind)
    assert kind.value == value


def test_the_registries_hold_no_kind_the_choices_do_not_know():
    assert set(KINDS.values()) == KIND_VALUES
    assert set(PLAN_KINDS.values()) == KIND_VALUES
    assert {kind.value for kind in all_kinds()} == KIND_VALUES


def test_kinds_where_lists_the_kinds_declaring_it():
    assert set(kinds_where(decommissions=True)) == {
        RequestKind.DECOMMISSION,
        RequestKind.PROJECT_DECOMMISSION,
        RequestKind.TENANT_DECOMMISSION,
    }
    assert kinds_where(decided_by_rules=False) == (RequestKind.END_ENVIRONMENT,)


def test_a_kind_on_a_cluster_is_not_asked_about_tiers():
    assert kind_for(RequestKind.TENANT_SYNC).target is Target.CLUSTER
    assert kind_for(RequestKind.PROJECT).asked_tiers({"tiers": ["dev", "prod"]}) == [
        "dev",
        "prod",
    ]


def _is_kind_member(node: ast.AST) -> bool:
    """`RequestKind.X` (or `choices.RequestKind.X`); not the enum's own `.values`, `.choices`."""
    if not isinstance(node, ast.Attribute) or not node.attr.isupper():
        return False
    owner = node.value
    return (isinstance(owner, ast.Name) and owner.id == "RequestKind") or (
        isinstance(owner, ast.Attribute) and owner.attr == "RequestKind"
    )


def _is_kind_literal(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value in KIND_VALUES


def _names_a_kind(node: ast.AST) -> bool:
    """A kind member, or a collection literal of them."""
    if _is_kind_member(node):
        return True
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(_is_kind_member(element) for element in node.elts)
    return False


def _reads_a_kind(node: ast.AST) -> bool:
    """`kind`, `x.kind`, `x["kind"]`: what a comparison with a kind's string would test."""
    if isinstance(node, ast.Name):
        return node.id == "kind"
    if isinstance(node, ast.Attribute):
        return node.attr == "kind"
    if isinstance(node, ast.Subscript):
        return isinstance(node.slice, ast.Constant) and node.slice.value == "kind"
    return False


def _kind_strings(node: ast.AST) -> bool:
    if _is_kind_literal(node):
        return True
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return bool(node.elts) and all(_is_kind_literal(element) for element in node.elts)
    return False


def branches_on_kinds(source: str) -> list[tuple[int, str]]:
    """(line, what) of every comparison, match or dispatch table on request kinds."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            if any(_names_a_kind(operand) for operand in operands):
                found.append((node.lineno, "compares with RequestKind"))
            elif any(_reads_a_kind(o) for o in operands) and any(
                _kind_strings(o) for o in operands
            ):
                found.append((node.lineno, "compares a kind with a kind's string"))
        elif isinstance(node, ast.match_case):
            if any(_is_kind_member(sub) for sub in ast.walk(node.pattern)):
                found.append((node.pattern.lineno, "matches on RequestKind"))
        elif isinstance(node, ast.Dict):
            if any(key is not None and _is_kind_member(key) for key in node.keys):
                found.append((node.lineno, "dispatches on RequestKind"))
        elif (
            isinstance(node, (ast.Tuple, ast.List, ast.Set))
            and sum(_is_kind_member(element) for element in node.elts) > 1
        ):
            found.append((node.lineno, "lists RequestKind members"))
    return found


def _product_modules():
    for app in APPS:
        for path in sorted((ROOT / app).rglob("*.py")):
            if "migrations" in path.parts or any(path.is_relative_to(r) for r in REGISTRIES):
                continue
            yield path


def test_no_module_outside_the_registries_branches_on_request_kinds():
    offenders = [
        f"{path.relative_to(ROOT)}:{line}: {what}"
        for path in _product_modules()
        for line, what in branches_on_kinds(path.read_text())
    ]
    assert not offenders, "ask tenants.kinds (or provisioning.inputs.kinds):\n" + "\n".join(
        offenders
    )


@pytest.mark.parametrize(
    "source",
    [
        "if request.kind == RequestKind.PROJECT: pass",
        "if kind in (RequestKind.NAMESPACE, RequestKind.ENVIRONMENT): pass",
        "QUIET = {RequestKind.EPHEMERAL, RequestKind.END_ENVIRONMENT}",
        "TABLE = {RequestKind.NAMESPACE: 1}",
        "if kind == 'quota_change': pass",
        "if r.kind in ('tenant_sync', 'tenant_decommission'): pass",
        "match kind:\n    case RequestKind.PROJECT:\n        pass",
    ],
)
def test_the_check_sees_each_way_of_branching(source):
    assert branches_on_kinds(source)


@pytest.mark.parametrize(
    "source",
    [
        "kind = RequestKind.NAMESPACE",  # a form saying which kind it asks for
        "Request.objects.create(kind=RequestKind.TENANT_SYNC)",
        "kind = models.CharField(choices=RequestKind.choices)",
        "if obj['kind'] == 'Namespace': pass",  # a Kubernetes kind, not a request's
        "label = RequestKind(kind).label if kind in RequestKind.values else kind",
    ],
)
def test_the_check_lets_declarations_be(source):
    assert not branches_on_kinds(source)


def test_a_registry_refuses_a_kind_declared_twice():
    from tenants.registry import Registry

    with pytest.raises(ValueError, match="declared twice"):
        Registry([kind_for("namespace"), kind_for("namespace")])
