"""How a person reaches a namespace with kubectl: a kubeconfig for its cluster whose user
signs in through the organisation's identity provider (kubelogin, or `berth token --exec`),
and what `kubectl` should answer them there, read off the ClusterRole their tier binds to
their role (provisioner.effective_permissions).

Only for namespaces the person may see (selectors.namespaces_visible_to), and those they
hold a live access grant on (selectors.namespaces_granted_to: the grant's page, and callers
that ask with `granted=True`); the kubeconfig holds no secret: the cluster's address and
CA, and how to ask the provider for a token.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from datetime import datetime

import yaml
from django.conf import settings
from django.db.models import Q
from django.http import Http404

from tenants import provisioner
from tenants.choices import NamespaceState, Role
from tenants.errors import DomainError
from tenants.models import AccessGrant, Cluster, Namespace, User
from tenants.selectors.access_grants import live_grant_of, live_grants_in, namespaces_granted_to
from tenants.selectors.namespaces import namespaces_visible_to
from tenants.selectors.rights import role_in

# Who gets the person's ID token for kubectl: the kubelogin plugin, or the `berth` command.
KUBELOGIN = "kubelogin"
BERTH = "berth"
CREDENTIALS = {
    KUBELOGIN: "kubelogin (kubectl oidc-login), the usual exec plugin for OpenID Connect",
    BERTH: "the berth command (berth token --exec), where kubelogin is not installed",
}
EXEC_API_VERSION = "client.authentication.k8s.io/v1"
# A kubeconfig given as a file (the page's Download, the API's YAML answer).
MEDIA_TYPE = "application/yaml"
ROLE_LABELS = {Role.OWNER: "Owners", Role.MEMBER: "Members", Role.VIEWER: "Viewers"}


class KubeconfigUnavailable(DomainError):
    """Berth cannot say how to reach this namespace (no sign-in provider, no API address)."""


@dataclass(frozen=True)
class Attempt:
    """A command to try, and what it should answer."""

    command: str
    expect: str


@dataclass(frozen=True)
class Access:
    """What the person's role gives them in this namespace: their tenant role's, or their
    live access grant's there (bound to their user name alone, until `until`)."""

    role: str | None
    cluster_role: str
    summary: str
    groups: list[str] = field(default_factory=list)
    grant: AccessGrant | None = None
    until: datetime | None = None


@dataclass(frozen=True)
class UseIt:
    namespace: Namespace
    credentials: str
    filename: str
    kubeconfig: dict
    access: Access
    attempts: list[Attempt]

    @property
    def text(self) -> str:
        return yaml.safe_dump(self.kubeconfig, sort_keys=False)

    @property
    def disposition(self) -> str:
        """The Content-Disposition of it as a file to save (a namespace's name needs no
        quoting: a DNS label)."""
        return f"attachment; filename={self.filename}"


def reachable_by(user: User, *, granted: bool = True):
    """The namespaces `user` may see, and with `granted` also those they hold a live access
    grant on (outside their tenants: only their kubeconfig there, nothing else)."""
    visible = namespaces_visible_to(user)
    if not granted:
        return visible
    return Namespace.objects.select_related(
        "tenant", "tier", "cluster", "project", "tier_revision", "bundle_revision"
    ).filter(Q(pk__in=visible.values("pk")) | Q(pk__in=namespaces_granted_to(user).values("pk")))


def namespace_by_reference(
    user: User, reference: str, *, cluster: str = "", granted: bool = False
) -> Namespace:
    """The namespace a URL names: digits are its id, anything else its name (a live one; with
    `cluster` when the name is live on more than one). 404 outside what `user` may see, and
    with `granted` (a kubeconfig, nothing else) those they hold a live access grant on."""
    visible = reachable_by(user, granted=granted)
    if reference.isdigit():
        found = visible.filter(pk=int(reference)).first()
        if found is None:
            raise Http404("No namespace with this id among those you can see.")
        return found
    live = visible.filter(name=reference).exclude(state=NamespaceState.DECOMMISSIONED)
    if cluster:
        live = live.filter(cluster__name=cluster)
    candidates = list(live.order_by("cluster__name")[:2])
    if not candidates:
        raise Http404("No live namespace of this name among those you can see.")
    if len(candidates) > 1:
        raise KubeconfigUnavailable(
            f"{reference} is live on more than one cluster ({candidates[0].cluster.name}, "
            f"{candidates[1].cluster.name}, …): name one with cluster."
        )
    return candidates[0]


def provider() -> tuple[str, str]:
    """The issuer and client id the clusters trust for people's ID tokens."""
    return settings.KUBE_OIDC_ISSUER_URL, settings.KUBE_OIDC_CLIENT_ID


def _user_exec(credentials: str, issuer: str, client_id: str) -> dict:
    if credentials == BERTH:
        return {
            "apiVersion": EXEC_API_VERSION,
            "command": settings.BERTH_CLI_COMMAND,
            "args": [
                "token",
                "--exec",
                f"--oidc-issuer-url={issuer}",
                f"--oidc-client-id={client_id}",
            ],
            "interactiveMode": "IfAvailable",
            "provideClusterInfo": False,
            "installHint": "Install the berth command: pip install berth from Berth's repository "
            "(docs/automation.md), so that `berth` is on your PATH.",
        }
    return {
        "apiVersion": EXEC_API_VERSION,
        "command": "kubectl",
        "args": [
            "oidc-login",
            "get-token",
            f"--oidc-issuer-url={issuer}",
            f"--oidc-client-id={client_id}",
            "--oidc-extra-scope=groups",
        ],
        "interactiveMode": "IfAvailable",
        "provideClusterInfo": False,
        "installHint": "Install kubelogin: kubectl krew install oidc-login "
        "(https://github.com/int128/kubelogin).",
    }


def _grant_access(grant: AccessGrant, namespace: Namespace) -> Access:
    summary = f"what {grant.cluster_role} allows"
    for row in provisioner.effective_permissions(namespace.tenant):
        if row["tier"].pk != namespace.tier_id:
            continue
        summary = next(
            (e["summary"] for e in row["entries"] if e["cluster_role"] == grant.cluster_role),
            summary,
        )
    return Access(
        role=grant.role,
        cluster_role=grant.cluster_role,
        summary=summary,
        grant=grant,
        until=grant.expires_at,
    )


def access_of(user: User, namespace: Namespace) -> Access:
    """The ClusterRole of the person's live access grant on the namespace (until its end),
    else the one the namespace's tier binds to the person's role in its tenant."""
    grant = live_grant_of(user, namespace)
    if grant is not None:
        return _grant_access(grant, namespace)
    role = role_in(user, namespace.tenant)
    if role is None:
        return Access(
            role=None,
            cluster_role="",
            summary=(
                f"nothing of the tenant's: you have no role in {namespace.tenant.slug}, so only "
                "what the platform binds to you elsewhere"
            ),
        )
    label = ROLE_LABELS[role]
    for row in provisioner.effective_permissions(namespace.tenant):
        if row["tier"].pk != namespace.tier_id:
            continue
        entry = next(e for e in row["entries"] if e["label"] == label)
        return Access(
            role=role,
            cluster_role=entry["cluster_role"],
            summary=entry["summary"],
            groups=list(entry["groups"]),
        )
    return Access(
        role=role,
        cluster_role=namespace.tier.cluster_role_for(role),
        summary=f"what {namespace.tier.cluster_role_for(role)} allows",
        groups=namespace.tenant.groups_for(role),
    )


def attempts_for(namespace: Namespace, access: Access) -> list[Attempt]:
    name = namespace.name
    if access.grant is not None:
        until = access.until.strftime("%Y-%m-%d %H:%M UTC") if access.until else "its end"
        return [
            Attempt(
                command=f"kubectl get pods -n {name}",
                expect=f"No resources found in {name} namespace. (or the pods running there)",
            ),
            Attempt(
                command=f"kubectl auth can-i --list -n {name}",
                expect=(
                    f"the rules of {access.cluster_role}, bound by your access grant to your "
                    f"user name ({access.grant.subject}) alone, not to a group, until {until}: "
                    f"{access.summary}"
                ),
            ),
        ]
    if not access.cluster_role:
        listed = "only the rights every signed-in user has (selfsubjectreviews and the like)"
        pods = f'Error from server (Forbidden): … cannot list resource "pods" in "{name}"'
    elif not access.groups:
        listed = (
            f"only the rights every signed-in user has: the tenant names no group for "
            f"its {ROLE_LABELS[access.role].lower()}, so {access.cluster_role} is bound "
            "to nobody"
        )
        pods = f'Error from server (Forbidden): … cannot list resource "pods" in "{name}"'
    else:
        listed = (
            f"the rules of {access.cluster_role}, bound to "
            f"{', '.join(access.groups)}: {access.summary}"
        )
        pods = f"No resources found in {name} namespace. (or the pods running there)"
    return [
        Attempt(command=f"kubectl get pods -n {name}", expect=pods),
        Attempt(command=f"kubectl auth can-i --list -n {name}", expect=listed),
    ]


def cluster_server(cluster: Cluster) -> dict:
    """A kubeconfig's cluster entry: the API server's address and CA."""
    server: dict = {"server": cluster.api_url}
    if cluster.ca_certificate.strip():
        server["certificate-authority-data"] = base64.b64encode(
            cluster.ca_certificate.strip().encode() + b"\n"
        ).decode()
    return server


def use_it(user: User, namespace: Namespace, *, credentials: str = KUBELOGIN) -> UseIt:
    """The kubeconfig and commands for `namespace`, which `user` may see."""
    issuer, client_id = provider()
    cluster = namespace.cluster
    if not (issuer and client_id):
        raise KubeconfigUnavailable(
            "Berth has no OpenID Connect provider configured (KUBE_OIDC_ISSUER_URL and "
            "KUBE_OIDC_CLIENT_ID, else OIDC_ISSUER and OIDC_CLIENT_ID), so it cannot say how "
            "kubectl signs in."
        )
    if not cluster.api_url:
        raise KubeconfigUnavailable(
            f"Cluster {cluster.name} has no API server URL in Berth: ask a platform admin."
        )
    server = cluster_server(cluster)
    user_name = f"{cluster.name}-oidc"
    context = f"{cluster.name}-{namespace.name}"
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": cluster.name, "cluster": server}],
        "users": [
            {"name": user_name, "user": {"exec": _user_exec(credentials, issuer, client_id)}}
        ],
        "contexts": [
            {
                "name": context,
                "context": {
                    "cluster": cluster.name,
                    "user": user_name,
                    "namespace": namespace.name,
                },
            }
        ],
        "current-context": context,
    }
    access = access_of(user, namespace)
    return UseIt(
        namespace=namespace,
        credentials=credentials,
        filename=f"{namespace.name}-kubeconfig.yaml",
        kubeconfig=config,
        access=access,
        attempts=attempts_for(namespace, access),
    )


def chosen_credentials(asked: str) -> str:
    """The sign-in helper a page's link asks for; kubelogin for anything else."""
    return asked if asked in CREDENTIALS else KUBELOGIN


def panel(user: User, namespace: Namespace, *, credentials: str = "") -> dict:
    """The namespace page's "Use it" section: the kubeconfig, or why there is none (for a
    namespace `user` sees, or holds a live access grant on); and who else reaches the
    namespace by a grant now (its "Access grants" section)."""
    chosen = chosen_credentials(credentials)
    shown = {"credentials": chosen, "choices": CREDENTIALS, "grants": live_grants_in(namespace)}
    try:
        found = use_it(user, namespace, credentials=chosen)
    except KubeconfigUnavailable as refused:
        return {"use_it": None, "unavailable": str(refused), **shown}
    return {"use_it": found, "unavailable": "", **shown}
