"""A deploy token's objects: its own ServiceAccount in the namespace, bound to the tier's
member role and nothing else. Not part of any plan: their lifetime is the token's (an hour
at most), so drift, repair, campaigns and the truth table leave them alone. Their
managed-by label says so (Berth's plans' label would make the watcher call them unexpected);
the token's id says which record they belong to."""

from __future__ import annotations

from typing import Any

from provisioning.plan.model import LABEL_TENANT, MANAGED_BY, metadata_of
from provisioning.plan.namespace import role_binding

DEPLOY_TOKENS_MANAGER = "berth-deploy-tokens"
LABEL_DEPLOY_TOKEN = "berth.dev/deploy-token"  # noqa: S105 - a label key


def deploy_token_objects(
    *, namespace: str, service_account: str, cluster_role: str, tenant: str, token_id: int
) -> list[dict[str, Any]]:
    labels = {
        MANAGED_BY: DEPLOY_TOKENS_MANAGER,
        LABEL_TENANT: tenant,
        LABEL_DEPLOY_TOKEN: str(token_id),
    }
    return [
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": metadata_of(service_account, labels, namespace),
            # The token the cluster issues is all it needs: no Secret is made for it.
            "automountServiceAccountToken": False,
        },
        role_binding(
            service_account,
            namespace,
            cluster_role,
            [{"kind": "ServiceAccount", "name": service_account, "namespace": namespace}],
            labels,
        ),
    ]
