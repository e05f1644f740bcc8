"""A deploy token on its cluster: create its ServiceAccount and binding, ask for a token of
it; and remove both when it is revoked or has expired (which ends every token of it)."""

from __future__ import annotations

from provisioning.kube import KubeError, cluster_client
from provisioning.plan import ref_of
from provisioning.plan.deploy_tokens import deploy_token_objects
from tenants.errors import ClusterUnavailable
from tenants.models import DeployToken
from tenants.provisioner import IssuedToken


def _objects(token: DeployToken) -> list[dict]:
    return deploy_token_objects(
        namespace=token.namespace.name,
        service_account=token.service_account,
        cluster_role=token.cluster_role,
        tenant=token.namespace.tenant.slug,
        token_id=token.pk,
    )


def issue(token: DeployToken) -> IssuedToken:
    namespace = token.namespace
    if namespace.cluster.plan_only:
        raise ClusterUnavailable(
            f"Cluster {namespace.cluster.name} is plan-only: Berth does not write to it, so it "
            "cannot mint tokens there."
        )
    seconds = int((token.expires_at - token.created_at).total_seconds())
    audiences = [token.audience] if token.audience else []
    try:
        client = cluster_client(namespace.cluster)
        for obj in _objects(token):
            client.apply(obj)
        value, expires_at, audiences = client.request_token(
            namespace.name, token.service_account, seconds=seconds, audiences=audiences
        )
    except KubeError as exc:
        raise ClusterUnavailable(
            f"Cluster {namespace.cluster.name} refused the deploy token: {exc.message}"
        ) from None
    return IssuedToken(token=value, expires_at=expires_at, audiences=tuple(audiences))


def remove(token: DeployToken) -> None:
    """The binding first: were the ServiceAccount's removal to fail, it can do nothing."""
    try:
        client = cluster_client(token.namespace.cluster)
        for obj in reversed(_objects(token)):
            client.delete(ref_of(obj))
    except KubeError as exc:
        raise ClusterUnavailable(
            f"Cluster {token.namespace.cluster.name} could not remove {token.service_account}: "
            f"{exc.message}"
        ) from None
