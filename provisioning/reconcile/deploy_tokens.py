"""A deploy token on its cluster, through its namespace's key: its ServiceAccount and
binding applied behind the same checks as any change of the namespace (the key held, the
cluster's guardrails verified), a token asked of it; both removed when it is revoked or
has expired (which ends every token of it). Each change is in the audit log with its cause."""

from __future__ import annotations

from typing import Any

from provisioning.kube import KubeError, cluster_client
from provisioning.plan import ref_of
from provisioning.plan.deploy_tokens import deploy_token_objects
from provisioning.reconcile.gates import cluster_gate
from provisioning.reconcile.keys import namespace_key
from provisioning.reconcile.queue import Cause, holding
from tenants import audit
from tenants.errors import ClusterUnavailable
from tenants.models import DeployToken
from tenants.provisioner import IssuedToken


def _objects(token: DeployToken) -> list[dict[str, Any]]:
    return deploy_token_objects(
        namespace=token.namespace.name,
        service_account=token.service_account,
        cluster_role=token.cluster_role,
        tenant=token.namespace.tenant.slug,
        token_id=token.pk,
    )


def issue(token: DeployToken) -> IssuedToken:
    namespace = token.namespace
    cluster = namespace.cluster
    if cluster.plan_only:
        raise ClusterUnavailable(
            f"Cluster {cluster.name} is plan-only: Berth does not write to it, so it "
            "cannot mint tokens there."
        )
    seconds = int((token.expires_at - token.created_at).total_seconds())
    audiences = [token.audience] if token.audience else []
    cause = Cause("token", token.pk)
    key = namespace_key(cluster.name, namespace.name)
    with holding([key], worker=f"deploy-token:{token.pk}", cause=cause) as held:
        if held:
            raise ClusterUnavailable(
                f"{namespace.name} is being changed right now; try again in a moment."
            )
        try:
            client = cluster_client(cluster)
            gate = cluster_gate(cluster, client)
            if gate is not None:
                raise ClusterUnavailable(f"No token minted: {gate.message}")
            objects = _objects(token)
            for obj in objects:
                client.apply(obj)
            _audit(token, cause, "applied", objects)
            value, expires_at, audiences = client.request_token(
                namespace.name, token.service_account, seconds=seconds, audiences=audiences
            )
        except KubeError as exc:
            raise ClusterUnavailable(
                f"Cluster {cluster.name} refused the deploy token: {exc.message}"
            ) from None
    return IssuedToken(token=value, expires_at=expires_at, audiences=tuple(audiences))


def remove(token: DeployToken) -> None:
    """The binding first: were the ServiceAccount's removal to fail, it can do nothing."""
    namespace = token.namespace
    cause = Cause("token", token.pk, detail="ended")
    key = namespace_key(namespace.cluster.name, namespace.name)
    with holding([key], worker=f"deploy-token:{token.pk}", cause=cause):
        try:
            client = cluster_client(namespace.cluster)
            objects = list(reversed(_objects(token)))
            for obj in objects:
                client.delete(ref_of(obj))
            _audit(token, cause, "deleted", objects)
        except KubeError as exc:
            raise ClusterUnavailable(
                f"Cluster {namespace.cluster.name} could not remove {token.service_account}: "
                f"{exc.message}"
            ) from None


def _audit(token: DeployToken, cause: Cause, status: str, objects: list[dict[str, Any]]) -> None:
    audit.record(
        actor=None,
        action="namespace.reconciled",
        obj=token.namespace,
        tenant_id=token.namespace.tenant_id,
        after={
            "causes": [str(cause)],
            "changes": [{"object": str(ref_of(obj)), "status": status} for obj in objects],
        },
    )
