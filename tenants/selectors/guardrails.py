"""Where tenant namespaces cannot go now: clusters whose guardrails Berth should have
installed and has not, or installed from another Berth version, or whose live guardrails a
check found weakened or incomplete (the runs check the live objects before each batch and
record what they find in the audit log; this reads what the installs and checks recorded)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import CharField, JSONField, OuterRef, QuerySet, Subquery
from django.db.models.functions import Cast

from tenants import provisioner
from tenants.choices import GuardrailsMode, RequestState
from tenants.conditions import Reason
from tenants.models import AuditEvent, Cluster, Request

# What the runs' checks of the live guardrails record on the cluster when what they find
# changes (provisioning.reconcile.guardrails), and the install that puts them right.
GUARDRAILS_WEAKENED = "guardrails.weakened"  # one says something else than it should
GUARDRAILS_MISSING = "guardrails.missing"  # one installed is gone
GUARDRAILS_RESTORED = "guardrails.restored"  # whole again, with no install
GUARDRAILS_INSTALLED = "install_guardrails"
GUARDRAILS_CHECKS = (
    GUARDRAILS_WEAKENED,
    GUARDRAILS_MISSING,
    GUARDRAILS_RESTORED,
    GUARDRAILS_INSTALLED,
)
_FOUND = {GUARDRAILS_WEAKENED: "weakened", GUARDRAILS_MISSING: "incomplete"}
UNFENCED = ("not installed", "outdated", *_FOUND.values())


@dataclass(frozen=True)
class Unfenced:
    cluster: Cluster
    state: str  # "not installed" | "outdated" | "weakened (...)" | "incomplete (...)"
    waiting: int  # requests waiting for them there

    @property
    def message(self) -> str:
        why = {
            "not installed": "guardrails not installed",
            "outdated": "guardrails from another Berth version",
        }.get(self.state, f"guardrails {self.state}")
        waits = f"; {self.waiting} request(s) wait for them" if self.waiting else ""
        return f"{self.cluster.name}: {why}{waits}"


def _checks(clusters: QuerySet[Cluster]) -> QuerySet[Cluster]:
    """The clusters, each with the last of its guardrail checks and installs (action and
    what was found), in the same query."""
    last = AuditEvent.objects.filter(
        object_type="tenants.cluster",
        object_id=Cast(OuterRef("pk"), output_field=CharField()),
        action__in=GUARDRAILS_CHECKS,
    ).order_by("-created_at", "-id")
    return clusters.annotate(
        guardrails_check=Subquery(last.values("action")[:1]),
        guardrails_found=Subquery(last.values("after")[:1], output_field=JSONField()),
    )


def guardrails_check(cluster: Cluster) -> tuple[str, list[str]]:
    """What the last check of the cluster's live guardrails recorded, unless an install
    came after: (GUARDRAILS_WEAKENED or GUARDRAILS_MISSING, the problems), or ("", [])."""
    if not hasattr(cluster, "guardrails_check"):
        cluster = _checks(Cluster.objects.filter(pk=cluster.pk)).get()
    action, after = cluster.guardrails_check, cluster.guardrails_found
    if action not in _FOUND:
        return "", []
    problems: Any = (after or {}).get("problems") or []
    return action, [str(problem) for problem in problems]


def guardrails_state(cluster: Cluster) -> str:
    """In people's words: installed (when) and current, outdated, not installed, weakened
    or incomplete (what the last check found), or not Berth's to check."""
    if cluster.plan_only:
        return "none needed (plan-only)"
    if cluster.guardrails == GuardrailsMode.EXTERNAL:
        return "the platform's own (not checked by Berth)"
    if not cluster.guardrails_digest:
        return "not installed"
    if cluster.guardrails_digest != provisioner.guardrails_digest(cluster):
        return "outdated"
    action, problems = guardrails_check(cluster)
    if action:
        return f"{_FOUND[action]} ({'; '.join(problems)})"
    return f"current (installed {cluster.guardrails_installed_at:%Y-%m-%d %H:%M} UTC)"


def unfenced_clusters() -> list[Unfenced]:
    """Clusters that would get no tenant namespace now, with how many requests wait: one
    query, and one more when there are any."""
    found = [
        (cluster, guardrails_state(cluster))
        for cluster in _checks(
            Cluster.objects.filter(plan_only=False, guardrails=GuardrailsMode.BERTH)
        ).order_by("name")
    ]
    found = [(cluster, state) for cluster, state in found if state.split(" (")[0] in UNFENCED]
    waiting: dict[str, int] = {}
    if found:
        for name in Request.objects.filter(
            state=RequestState.APPROVED, waiting_for=Reason.GUARDRAILS
        ).values_list("payload__cluster", flat=True):
            waiting[name] = waiting.get(name, 0) + 1
    return [Unfenced(cluster, state, waiting.get(cluster.name, 0)) for cluster, state in found]
