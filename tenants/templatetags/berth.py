"""Template filters for showing Berth's records the way people read them: quantities as
Kubernetes writes them with cores and GiB beside (tenants.quantities.amount), budgets in
cores and GiB, lists joined, choices and audit actions by their words, objects by their
names with links."""

from __future__ import annotations

import re
from functools import partial

from django import template
from django.urls import NoReverseMatch, reverse
from django.utils.html import format_html

from tenants.choices import AUDIT_ACTIONS, RequestKind
from tenants.conditions import condition
from tenants.quantities import Amount, amount, payload_items

register = template.Library()


@register.filter
def for_people(payload: dict | None) -> list[tuple[str, object]]:
    """`{% for key, value in request.payload|for_people %}`: what a request asks for, its
    quantities as typed ("500m (0.5 cores)") and its choices in words."""
    return [
        (key, value.html() if isinstance(value, Amount) else value)
        for key, value in payload_items(payload or {})
    ]


@register.inclusion_tag("tenants/_asked_for.html")
def asked_for(payload: dict | None) -> dict:
    """`{% asked_for request.payload %}`: a request's payload as pills people read."""
    return {"items": for_people(payload)}


@register.filter
def budget_figures(row: dict) -> str:
    """A budget row of selectors.budget_summary as "8.2 of 32 cores (23.8 left)", each
    exact on hover."""
    used, total, left = (
        amount(row["key"], row[f"{part}_amount"]) for part in ("used", "total", "left")
    )
    return format_html(
        "{} of {} ({} left)",
        used.bare().reading_html(),
        total.reading_html(),
        left.bare().reading_html(),
    )


@register.filter
def budget_parts(row: dict) -> str:
    """The same row split: "in use 1.5, requested 2, left 0.5 of 4 cores"."""
    live, requested, left, total = (
        amount(row["key"], row[f"{part}_amount"]) for part in ("live", "requested", "left", "total")
    )
    return format_html(
        "in use {}, requested {}, left {} of {}",
        *(part.bare().reading_html() for part in (live, requested, left)),
        total.reading_html(),
    )


@register.filter
def action_words(action: str) -> str:
    """`{{ event.action|action_words }}`: "request.mark_ready" as "finished provisioning:
    ready"; an action not in the list loses its dots and underscores."""
    return AUDIT_ACTIONS.get(action) or re.sub(r"[._]+", " ", action)


# What the audit log names an object by, and where its page is.
_KINDS = dict(RequestKind.choices)
_REQUEST_REPR = re.compile(r"#\d+ (?P<kind>.+) for \S+")


def _link(name: str, *args: object) -> str | None:
    try:
        return reverse(name, args=args)
    except NoReverseMatch:
        return None


@register.simple_tag
def audit_object(event) -> str:
    """`{% audit_object event %}`: the event's object by its name (a tenant by its slug,
    not its id) with a link to its page when it has one."""
    kind, pk, shown = event.object_type.rsplit(".", 1)[-1], event.object_id, event.object_repr
    tenant = event.tenant.slug if event.tenant_id else ""
    url = None
    if kind == "request":
        found = _REQUEST_REPR.fullmatch(shown)
        what = found["kind"].lower() if found else "request"
        shown = f"Request #{pk}, {what}" + (f" for {tenant}" if tenant else "")
        url = _link("request-detail", pk) if pk.isdigit() else None
    elif kind == "tenant":
        url = _link("tenant-detail", shown)
        shown = f"Tenant {shown}"
    else:
        pages = {
            "namespace": "namespace-detail",
            "ephemeralenvironment": "environment-detail",
            "upgradecampaign": "campaign-detail",
            "approvalrule": "rule-edit",
        }
        link = partial(_link, pages[kind]) if kind in pages else None
        url = link(pk) if link and pk.isdigit() else None
        if kind == "user":
            url = _link("access-person", shown)
    return format_html('<a href="{}">{}</a>', url, shown) if url else shown


@register.simple_tag
def commit_link(tenant, sha: str) -> str:
    """`{% commit_link tenant commit.sha as url %}`: the commit's page on the forge, or ""."""
    return tenant.commit_link(sha)


@register.filter
def quantity(stored: int, dimension: str) -> str:
    """`{{ namespace.cpu_millis|quantity:"cpu" }}`: "1500m (1.5 cores)"."""
    return amount(dimension, stored).html()


register.filter("cpu", partial(quantity, dimension="cpu"))
register.filter("memory", partial(quantity, dimension="memory"))
register.filter("storage", partial(quantity, dimension="storage"))


@register.filter
def by_role(tiers: list[dict]) -> list[dict]:
    """provisioner.effective_permissions (per tier, per role) turned round for reading: one entry
    per role, with the tiers that give it the same rights together ("Development,
    Staging: deploy..."; "Production: read..."). `every` marks rights alike on every tier."""
    roles: dict[str, dict] = {}
    for row in tiers:
        for entry in row["entries"]:
            role = roles.setdefault(
                entry["label"], {"label": entry["label"], "groups": entry["groups"], "grants": []}
            )
            same = (entry["summary"], entry["cluster_role"])
            grant = next(
                (g for g in role["grants"] if (g["summary"], g["cluster_role"]) == same), None
            )
            if grant is None:
                grant = {
                    "summary": entry["summary"],
                    "cluster_role": entry["cluster_role"],
                    "tiers": [],
                }
                role["grants"].append(grant)
            grant["tiers"].append(row["tier"])
    for role in roles.values():
        for grant in role["grants"]:
            grant["every"] = len(grant["tiers"]) == len(tiers) > 1
    return list(roles.values())


@register.filter
def gitops_only_tiers(tiers: list[dict]) -> list:
    """The tiers of provisioner.effective_permissions where only GitOps may deploy."""
    return [row["tier"] for row in tiers if row["gitops_only"]]


@register.simple_tag
def kargo_namespace(tenancy_request) -> str:
    """`{% kargo_namespace request as kargo %}`: its project's Kargo namespace, or ""."""
    from tenants.selectors import kargo_namespace_of_request

    return kargo_namespace_of_request(tenancy_request)


@register.simple_tag
def may_see_audit(user) -> bool:
    """`{% may_see_audit user as audit %}`: whether the top bar links the audit log."""
    from tenants.selectors import may_see_audit as allowed

    return user.is_authenticated and allowed(user)


SYSTEM_NAMES = {"kubernetes": "Kubernetes", "argocd": "Argo CD", "kargo": "Kargo", "flux": "Flux"}


@register.filter
def system_name(system: str) -> str:
    """`{{ grant.system|system_name }}`: where a grant of the access map takes effect."""
    return SYSTEM_NAMES.get(system, system)


@register.filter
def truth_state(state: str) -> str:
    """`{{ row.state|truth_state }}`: a truth table state in words ("missing in git")."""
    from tenants.selectors import STATE_LABELS

    return STATE_LABELS.get(state, state)


@register.filter
def standing(conditions: list[dict] | None) -> dict | None:
    """The condition that says where a reconcile stands (Failed, Waiting, Progressing, then
    Ready): the one a page shows."""
    for kind in ("Failed", "Waiting", "Progressing", "Ready"):
        found = condition(conditions or [], kind)
        if found and found.get("status") == "True":
            return found
    return None
