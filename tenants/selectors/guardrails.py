"""Where tenant namespaces cannot go now: clusters whose guardrails Berth should have
installed and has not, or installed from another Berth version (the runs check the live
objects before each batch; this reads what the installs recorded)."""

from __future__ import annotations

from dataclasses import dataclass

from tenants import provisioner
from tenants.choices import GuardrailsMode, RequestState
from tenants.models import Cluster, Request

GUARDRAILS_WAIT = "guardrails"  # how the reason of a request waiting for them begins


@dataclass(frozen=True)
class Unfenced:
    cluster: Cluster
    state: str  # "not installed" | "outdated"
    waiting: int  # requests waiting for them there

    @property
    def message(self) -> str:
        why = (
            "guardrails not installed"
            if self.state == "not installed"
            else "guardrails from another Berth version"
        )
        waits = f"; {self.waiting} request(s) wait for them" if self.waiting else ""
        return f"{self.cluster.name}: {why}{waits}"


def guardrails_state(cluster: Cluster) -> str:
    """In people's words: installed (when) and current, outdated, not installed, or not
    Berth's to check."""
    if cluster.plan_only:
        return "none needed (plan-only)"
    if cluster.guardrails == GuardrailsMode.EXTERNAL:
        return "the platform's own (not checked by Berth)"
    if not cluster.guardrails_digest:
        return "not installed"
    if cluster.guardrails_digest != provisioner.guardrails_digest(cluster):
        return "outdated"
    return f"current (installed {cluster.guardrails_installed_at:%Y-%m-%d %H:%M} UTC)"


def unfenced_clusters() -> list[Unfenced]:
    """Clusters that would get no tenant namespace now, with how many requests wait: one
    query, and one more when there are any."""
    found = [
        (cluster, guardrails_state(cluster))
        for cluster in Cluster.objects.filter(
            plan_only=False, guardrails=GuardrailsMode.BERTH
        ).order_by("name")
    ]
    found = [(cluster, state) for cluster, state in found if state in ("not installed", "outdated")]
    waiting: dict[str, int] = {}
    if found:
        for reason in Request.objects.filter(
            state=RequestState.APPROVED, wait_reason__startswith=GUARDRAILS_WAIT
        ).values_list("wait_reason", flat=True):
            # "guardrails not installed on <cluster> (...)" (provisioning.jobs.guardrails)
            name = reason.removeprefix(f"{GUARDRAILS_WAIT} not installed on ").split(" ", 1)[0]
            waiting[name] = waiting.get(name, 0) + 1
    return [Unfenced(cluster, state, waiting.get(cluster.name, 0)) for cluster, state in found]
