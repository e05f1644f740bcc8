"""Environment rules: which namespace an ephemeral environment gets, like GitLab CI `rules:`.

A tenant keeps an ordered list. Each rule has an `if` (a CEL expression over the
environment's variables; empty means always), a `namespace` template, and may `refuse`
instead (GitLab's `when: never`). The first rule whose `if` holds decides; when a tenant
has rules and none matches, the environment is refused. A tenant without rules gets
`$TENANT-$PROJECT-$ENV_SLUG`.

Variables, in CEL by their lower-case names and in templates as `$NAME` / `${NAME}`:

    tenant    TENANT     the tenant's slug
    project   PROJECT    the project's name
    env_slug  ENV_SLUG   the environment's slug (CI_ENVIRONMENT_SLUG), e.g. review-42
    branch    BRANCH     the branch it deploys (may be empty)
    mr_id     MR_ID      the merge request id (may be empty)

Expanded values are made DNS-safe (lower case, other characters become dashes); a name
longer than 63 characters keeps its first 50 and gets a hash of the whole (`naming.fit`).
A template with no variable is a fixed namespace every matching environment shares; it is
created on first use and stays when they end.
"""

from __future__ import annotations

import functools
import string
from dataclasses import dataclass
from typing import Any

from celpy import CELEvalError
from django.conf import settings

from tenants import cel
from tenants.naming import (
    RESERVED_SUFFIXES,
    argocd_apps_namespace,
    fit,
    gitops_namespace,
    label_value,
    outside_prefix_reason,
    reserved_reason,
)
from tenants.validators import DNS_LABEL_MAX

VARIABLES = ("tenant", "project", "env_slug", "branch", "mr_id")
DEFAULT_TEMPLATE = "$TENANT-$PROJECT-$ENV_SLUG"
SAMPLE = {
    "tenant": "payments",
    "project": "checkout",
    "env_slug": "review-42",
    "branch": "feature/new-cart",
    "mr_id": "42",
}


class RuleError(ValueError):
    """A rule that cannot be saved: its condition or template is wrong."""


@dataclass(frozen=True)
class Choice:
    namespace: str
    shared: bool  # a fixed name: other environments may live in it, and it outlives them
    rule_position: int | None  # None: the tenant has no rules, the default template named it
    refused: str = ""  # why, when the matching rule refuses
    truncated: bool = False  # longer than 63 characters, cut to fit with a hash


def _evaluate(program, variables: dict[str, str]):
    return cel.evaluate(program, dict(variables))


@functools.lru_cache(maxsize=512)
def compile_condition(condition: str):
    """Compile the condition and try it on sample variables; RuleError says what is wrong."""
    return cel.compile_checked(
        condition,
        sample=SAMPLE,
        what="The if condition",
        allowed=f"it may use only these variables: {', '.join(VARIABLES)}",
        error=RuleError,
    )


def _template(text: str) -> string.Template:
    template = string.Template(text)
    if not template.is_valid():
        raise RuleError(
            f"The namespace {text!r} has a $ that names no variable; write $$ "
            "for a literal dollar sign (namespaces cannot hold one anyway)."
        )
    unknown = sorted(set(template.get_identifiers()) - {v.upper() for v in VARIABLES})
    if unknown:
        raise RuleError(
            f"The namespace {text!r} uses unknown variable(s) {', '.join(unknown)}; "
            f"known: {', '.join('$' + v.upper() for v in VARIABLES)}."
        )
    return template


def compose(text: str, variables: dict[str, str]) -> str:
    """The template with the variables put in, DNS-safe but of any length."""
    values = {name.upper(): label_value(str(value)) for name, value in variables.items()}
    return label_value(_template(text).substitute(values))


def expand(text: str, variables: dict[str, str]) -> str:
    """The namespace a template names for these variables, DNS-safe and at most 63 long."""
    return fit(compose(text, variables))


def _named(text: str, variables: dict[str, str], position: int | None) -> Choice:
    full = compose(text, variables)
    return Choice(
        fit(full), shared=is_shared(text), rule_position=position, truncated=fit(full) != full
    )


def is_shared(text: str) -> bool:
    return not _template(text).get_identifiers()


def name_problem(name: str, *, tenant: str) -> str | None:
    """Why a rule may never name `name`: reserved for the platform, outside the tenant's
    prefix, or one of the names Berth gives a tenant's own namespaces."""
    if not name:
        return "names an empty namespace"
    problem = reserved_reason(name, berth_namespace=settings.BERTH_NAMESPACE) or (
        outside_prefix_reason(name, tenant=tenant)
    )
    if problem:
        return problem
    if name == argocd_apps_namespace(tenant):
        return f"{name} is the tenant's Argo CD applications namespace."
    if name == gitops_namespace(tenant):
        return f"{name} is the tenant's Flux GitOps namespace."
    for suffix in sorted(RESERVED_SUFFIXES):
        if name.endswith(f"-{suffix}"):
            return f"{name} ends with -{suffix}: such names are projects' Kargo namespaces."
    return None


def check_rule(*, tenant: str, condition: str, namespace: str, refuse: bool) -> None:
    """Raise RuleError unless the rule is sound for this tenant: its condition compiles and
    gives true or false, its template expands to a name inside the tenant's prefix."""
    if condition.strip():
        compile_condition(condition.strip())
    if refuse:
        return
    if not namespace.strip():
        raise RuleError("A rule that does not refuse needs a namespace.")
    if len(namespace) > 200:
        raise RuleError("The namespace template is longer than 200 characters.")
    sample = {**SAMPLE, "tenant": tenant}
    name = expand(namespace, sample)
    problem = name_problem(name, tenant=tenant)
    if problem:
        raise RuleError(
            f"The namespace {namespace!r} gives {name!r} for a sample environment "
            f"({', '.join(f'{k}={v}' for k, v in sample.items())}): {problem}"
        )
    if len(name) > DNS_LABEL_MAX:  # pragma: no cover - fit() guarantees it
        raise RuleError(f"{name!r} is longer than {DNS_LABEL_MAX} characters.")


def rule_named(choice: Choice) -> str:
    """Which rule chose a namespace, for a sentence: "Rule 2" or the default template."""
    if choice.rule_position is None:
        return f"The default rule ({DEFAULT_TEMPLATE})"
    return f"Rule {choice.rule_position}"


def choose(rules: list[Any], variables: dict[str, str]) -> Choice | None:
    """The first rule whose condition holds, as the namespace it names; None if none does.

    `rules` are EnvironmentRule rows (or anything with their attributes) in order; with no
    rules at all, the default template decides."""
    if not rules:
        return _named(DEFAULT_TEMPLATE, variables, None)
    for rule in rules:
        condition = rule.condition.strip()
        if condition:
            result = _evaluate(compile_condition(condition), variables)
            if isinstance(result, CELEvalError):
                raise RuleError(
                    f"Rule {rule.position}'s if failed on these variables: {cel.describe(result)}"
                )
            if not bool(result):
                continue
        if rule.refuse:
            return Choice(
                "",
                shared=False,
                rule_position=rule.position,
                refused=rule.message or f"Rule {rule.position} refuses this environment.",
            )
        return _named(rule.namespace_template, variables, rule.position)
    return None
