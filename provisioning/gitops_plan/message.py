"""The commit message: what changed, for which request, approved by whom, and why."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from provisioning.gitops_plan.layout import ENGINE_LABELS


def commit_message(
    *,
    kind: str,
    request_id: int,
    tenant: str,
    app: str,
    engine: str,
    namespaces: Iterable[str] = (),
    changed: Mapping[str, str],
    notes: Iterable[str] = (),
    approvers: Iterable[str] = (),
    reason: str = "",
    environment: str = "",
    cluster: str = "",
) -> str:
    """What changed and why, ending in the trailers Berth-Request and Approved-by.
    `namespaces` are the ones the request itself creates, changes or removes."""
    names = list(namespaces)
    first = (names or [app])[0]
    subject, verb = {
        "namespace": (f"Add {first} (namespace request #{request_id})", "add"),
        "project": (f"Add project {app} (project request #{request_id})", "add"),
        "environment": (
            f"Add {first} to project {app} (environment request #{request_id})",
            "add",
        ),
        "decommission": (f"Remove {first} (decommission request #{request_id})", "remove"),
        "quota_change": (f"Update {first} (quota change request #{request_id})", "update"),
        "ephemeral": (
            f"Add {environment} of {app} in {first} (ephemeral environment request #{request_id})",
            "add",
        ),
        "end_environment": (
            f"Remove {environment} of {app} from {first} (end request #{request_id})",
            "remove",
        ),
        "tenant_sync": (
            f"Keep {tenant}'s index for {cluster} (tenant request #{request_id})",
            "keep",
        ),
        "project_decommission": (
            f"Remove project {app} from {cluster} (decommission request #{request_id})",
            "remove",
        ),
        "tenant_decommission": (
            f"Remove tenant {tenant} from {cluster} (decommission request #{request_id})",
            "remove",
        ),
    }.get(kind, (f"Update {app} (request #{request_id})", "update"))
    why = f"{kind.replace('_', ' ')} request #{request_id}"
    what = (
        f"the {ENGINE_LABELS.get(engine, engine)} definitions of {app}"
        if app
        else f"the index of {cluster}"
    )
    paragraphs = [
        subject,
        f"Berth keeps {what} for tenant {tenant} in step with what was approved in {why}"
        + (f", which asked to {verb} {', '.join(names)}." if names else "."),
    ]
    if reason.strip():
        paragraphs.append(f"Reason given: {reason.strip()}")
    paragraphs.append(
        "Files:\n" + "\n".join(f"  {change:<9} {path}" for path, change in changed.items())
    )
    notes = list(notes)
    if notes:
        paragraphs.append("Left as they are:\n" + "\n".join(f"  {note}" for note in notes))
    trailers = [f"Berth-Request: {request_id}"]
    trailers += [f"Approved-by: {who}" for who in (list(approvers) or ["policy"])]
    paragraphs.append("\n".join(trailers))
    return "\n\n".join(paragraphs) + "\n"
