"""Deploy tokens as people see them: who may mint one for a namespace (and why not), the
namespace's tokens, and the kubeconfig a minted token comes in."""

from __future__ import annotations

from datetime import timedelta

import yaml
from django.db.models import QuerySet

from tenants.choices import NamespaceState, Role
from tenants.models import DeployToken, Namespace, User
from tenants.selectors.kubeconfig import cluster_server
from tenants.selectors.namespaces import namespaces_visible_to
from tenants.selectors.rights import is_platform_admin, role_in

# What a pipeline may ask for: the API server's own floor (10 minutes) to an hour.
SHORTEST = timedelta(minutes=10)
LONGEST = timedelta(hours=1)
MINTING_ROLES = (Role.OWNER, Role.MEMBER)
SHOWN = 20  # the namespace page's list: the latest mints


def why_no_deploy_token(user: User, namespace: Namespace) -> str | None:
    """Why `user` may not mint a deploy token for `namespace`; None when they may."""
    if role_in(user, namespace.tenant) not in MINTING_ROLES:
        return (
            f"Only the owners and members of {namespace.tenant.slug} may mint deploy tokens "
            "for its namespaces."
        )
    if not namespace.tier.deploy_tokens_allowed:
        return (
            f"Tier {namespace.tier.slug} does not allow deploy tokens: changes reach its "
            "namespaces through the GitOps repository (a platform admin sets this per tier)."
        )
    if namespace.state != NamespaceState.ACTIVE:
        return f"{namespace.name} is {namespace.get_state_display().lower()}, not active."
    if namespace.cluster.plan_only:
        return f"Cluster {namespace.cluster.name} is plan-only: Berth does not write to it."
    return None


def why_token_ends(token: DeployToken) -> str | None:
    """Why a live token must end now: it holds rights its minter no longer has to hand out.
    Its minter was deactivated or may no longer mint one there (left the tenant, the tier
    stopped allowing tokens, the namespace left active), or the tier's member role is no
    longer the one the token was bound to. None while it may live."""
    minter, namespace = token.minted_by, token.namespace
    if not minter.is_active:
        return f"{minter.username} was deactivated."
    why_not = why_no_deploy_token(minter, namespace)
    if why_not:
        return f"{minter.username} may no longer mint it: {why_not}"
    if token.cluster_role != namespace.tier.member_cluster_role:
        return (
            f"Tier {namespace.tier.slug}'s members now have {namespace.tier.member_cluster_role}, "
            f"not the {token.cluster_role} the token was bound to."
        )
    return None


def may_revoke_deploy_token(user: User, token: DeployToken) -> bool:
    return is_platform_admin(user) or role_in(user, token.namespace.tenant) in MINTING_ROLES


def deploy_tokens_of(namespace: Namespace) -> QuerySet[DeployToken]:
    return namespace.deploy_tokens.select_related("minted_by", "revoked_by")


def visible_deploy_token(user: User, pk: int) -> DeployToken:
    """The token, if its namespace is one `user` may see (DoesNotExist otherwise)."""
    return DeployToken.objects.select_related(
        "namespace__tenant", "namespace__cluster", "namespace__tier"
    ).get(pk=pk, namespace__in=namespaces_visible_to(user))


def deploy_tokens_panel(user: User, namespace: Namespace) -> dict:
    """The namespace page's "Deploy tokens" section."""
    return {
        "refused": why_no_deploy_token(user, namespace),
        "tokens": list(deploy_tokens_of(namespace)[:SHOWN]),
        "may_revoke": role_in(user, namespace.tenant) in MINTING_ROLES or is_platform_admin(user),
    }


def token_kubeconfig(token: DeployToken, value: str) -> str:
    """A kubeconfig for a pipeline: the cluster, the namespace, the token itself."""
    cluster = token.namespace.cluster
    server = cluster_server(cluster)
    context = f"{cluster.name}-{token.namespace.name}-deploy"
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": cluster.name, "cluster": server}],
        "users": [{"name": token.service_account, "user": {"token": value}}],
        "contexts": [
            {
                "name": context,
                "context": {
                    "cluster": cluster.name,
                    "user": token.service_account,
                    "namespace": token.namespace.name,
                },
            }
        ],
        "current-context": context,
    }
    return yaml.safe_dump(config, sort_keys=False)
