"""Template filters for showing Berth's records the way people wrote them."""

from django import template

from tenants.quantities import gib_to_storage, mib_to_memory, millis_to_cpu, payload_for_people

register = template.Library()


@register.filter
def for_people(payload: dict | None) -> list[tuple[str, object]]:
    """`{% for key, value in request.payload|for_people %}`: quantities in people's units."""
    return list(payload_for_people(payload or {}).items())


@register.simple_tag
def commit_link(tenant, sha: str) -> str:  # noqa: ANN001 - Tenant
    """`{% commit_link tenant commit.sha as url %}`: the commit's page on the forge, or ""."""
    return tenant.commit_link(sha)


register.filter("cpu", millis_to_cpu)
register.filter("memory", mib_to_memory)
register.filter("storage", gib_to_storage)


@register.simple_tag
def may_see_audit(user) -> bool:  # noqa: ANN001 - User
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
