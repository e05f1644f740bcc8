"""The demo world that `make run` seeds: tiers, a sandbox cluster, two tenants and their people.

Idempotent: running it again updates the same rows instead of adding new ones.
"""

from __future__ import annotations

import os
import re
import subprocess
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.db import transaction

from tenants.choices import (
    Decision,
    GitOpsEngine,
    MembershipSource,
    NamespaceState,
    NetworkPreset,
    RequestKind,
    RequestState,
)
from tenants.demo_people import PEOPLE, PLATFORM_ADMIN_GROUP
from tenants.membership_sync import memberships_from_groups
from tenants.models import (
    Approval,
    Cluster,
    EnvironmentTier,
    Membership,
    Namespace,
    Request,
    Tenant,
    User,
)
from tenants.naming import namespace_name
from tenants.services.clusters import register_platform_namespaces
from tenants.services.names import claim_tenant_names

# The ClusterRoles a tenant's owners, members and viewers get in a tier's namespaces.
EDITING_ROLES = dict(
    owner_cluster_role="berth-tenant-edit",
    member_cluster_role="berth-tenant-edit",
    viewer_cluster_role="berth-tenant-view",
)
READING_ROLES = dict(
    owner_cluster_role="berth-tenant-view",
    member_cluster_role="berth-tenant-view",
    viewer_cluster_role="berth-tenant-view",
)

TIERS = [
    dict(
        slug="dev",
        name="Development",
        position=10,
        default_cpu_millis=1000,
        default_memory_mib=2048,
        default_storage_gib=10,
        max_cpu_millis=4000,
        max_memory_mib=8192,
        max_storage_gib=50,
        network_preset=NetworkPreset.INGRESS,
        pod_security_level="baseline",
        **EDITING_ROLES,
        auto_repair_drift=True,
        deploy_tokens_allowed=True,
    ),
    dict(
        slug="staging",
        name="Staging",
        position=20,
        default_cpu_millis=2000,
        default_memory_mib=4096,
        default_storage_gib=20,
        max_cpu_millis=8000,
        max_memory_mib=16384,
        max_storage_gib=100,
        network_preset=NetworkPreset.INGRESS,
        pod_security_level="restricted",
        **EDITING_ROLES,
        auto_repair_drift=True,
        deploy_tokens_allowed=True,
    ),
    # Only the GitOps controller writes prod (the Morgridge model): people can read.
    dict(
        slug="prod",
        name="Production",
        position=30,
        default_cpu_millis=4000,
        default_memory_mib=8192,
        default_storage_gib=50,
        max_cpu_millis=16000,
        max_memory_mib=32768,
        max_storage_gib=500,
        network_preset=NetworkPreset.INGRESS,
        pod_security_level="restricted",
        **READING_ROLES,
        auto_repair_drift=False,
        # Write on prod for an incident, for an hour or so: two platform admins decide.
        elevated_role="prod-edit",
        elevated_cluster_role="berth-tenant-edit",
        access_max_minutes=240,
    ),
    dict(
        slug="review",
        name="Review app (ephemeral)",
        position=5,
        default_cpu_millis=500,
        default_memory_mib=1024,
        default_storage_gib=0,
        max_cpu_millis=2000,
        max_memory_mib=4096,
        max_storage_gib=10,
        network_preset=NetworkPreset.INGRESS,
        pod_security_level="restricted",
        **EDITING_ROLES,
        is_ephemeral=True,
        default_ttl=timedelta(days=2),
        max_ttl=timedelta(days=14),
        auto_repair_drift=True,
        deploy_tokens_allowed=True,
    ),
]


# Room for the README's journey and more: a dev namespace (1 core, 2 GiB, 10 GiB) and a
# three-tier project (7 cores, 14 GiB, 80 GiB, 3 namespaces), then two more requests as
# large as that project, with 10 cores still left (tests/tenants/test_first_hour.py).
DEMO_BUDGET = dict(
    budget_cpu_millis=32000,
    budget_memory_mib=64 * 1024,
    budget_storage_gib=500,
    budget_namespaces=20,
)

TENANTS = [
    dict(
        slug="payments",
        name="Payments team",
        owner_groups=["payments-owners"],
        member_groups=["payments-devs"],
        viewer_groups=["payments-auditors"],
        gitops_engine=GitOpsEngine.ARGOCD_KARGO,
        allowed_domains=["payments.example.com"],
        **DEMO_BUDGET,
    ),
    dict(
        slug="search",
        name="Search team",
        owner_groups=["search-owners"],
        member_groups=["search-devs"],
        viewer_groups=[],
        gitops_engine=GitOpsEngine.FLUX,
        allowed_domains=["search.example.com"],
        **DEMO_BUDGET,
    ),
]


@transaction.atomic
def seed(
    *,
    sandbox_api_url: str,
    repo_url_for: dict[str, str] | None = None,
    sandbox_token: str = "",
    sandbox_ca: str = "",
) -> dict[str, int]:
    tiers = [EnvironmentTier.objects.update_or_create(slug=t["slug"], defaults=t)[0] for t in TIERS]
    cluster, _ = Cluster.objects.update_or_create(
        name="sandbox",
        defaults=dict(
            display_name="Sandbox (local Kubernetes API stand-in)",
            api_url=sandbox_api_url,
            auth_method="token",
            credentials=sandbox_token,
            ca_certificate=sandbox_ca,
            is_sandbox=True,
            has_kargo=True,
            has_flux=True,
        ),
    )
    register_platform_namespaces(cluster)
    tenants = []
    for spec in TENANTS:
        tenant = Tenant.objects.filter(slug=spec["slug"]).first() or Tenant()
        for field, value in spec.items():
            setattr(tenant, field, value)
        if repo_url_for and spec["slug"] in repo_url_for:
            tenant.gitops_repo_url = repo_url_for[spec["slug"]]
        elif _earlier_demo_url(tenant) and tenant.gitops_repo_url.startswith("file://"):
            tenant.gitops_repo_url = ""  # seed_git_repos gives it one Flux can read
        # The checks every other way of saving a tenant goes through (its URL among them).
        tenant.full_clean()
        tenant.save()
        tenant.allowed_clusters.set([cluster])
        claim_tenant_names(tenant, cluster)
        tenant.allowed_tiers.set(tiers)
        tenants.append(tenant)

    for person in PEOPLE:
        user, created = User.objects.update_or_create(
            username=person.username,
            defaults=dict(
                first_name=person.first_name,
                last_name=person.last_name,
                email=person.email,
                oidc_subject=person.subject,
                is_platform_admin=PLATFORM_ADMIN_GROUP in person.groups,
                last_groups=sorted(person.groups),
            ),
        )
        if created:  # demo people sign in through the identity provider, never a password
            user.set_unusable_password()
            user.save(update_fields=["password"])
        for tenant, role in memberships_from_groups(tenants, person.groups).items():
            Membership.objects.update_or_create(
                user=user,
                tenant=tenant,
                defaults={"role": role, "source": MembershipSource.OIDC},
            )
    return {"tiers": len(tiers), "tenants": len(tenants), "people": len(PEOPLE)}


def seed_approved_namespaces(count: int, *, app_prefix: str = "app") -> list[int]:
    """The demo at scale: `count` namespace requests of payments, each its own app, as
    provisioning leaves them just before the GitOps step (approved by pat, their dev
    namespaces pending). The GitOps bench and the writer's concurrency tests start here.
    Returns the requests' ids."""
    seed(sandbox_api_url="http://127.0.0.1:9")
    tenant = Tenant.objects.get(slug="payments")
    developer, admin = User.objects.get(username="dev"), User.objects.get(username="pat")
    tier, cluster = EnvironmentTier.objects.get(slug="dev"), Cluster.objects.get(name="sandbox")
    ids = []
    for index in range(count):
        app = f"{app_prefix}{index:03d}"
        tenancy_request = Request.objects.create(
            tenant=tenant,
            kind=RequestKind.NAMESPACE,
            requester=developer,
            state=RequestState.PROVISIONING,
            payload={
                "app": app,
                "tier": "dev",
                "cluster": "sandbox",
                "cpu_millis": 100,
                "memory_mib": 128,
                "storage_gib": 0,
            },
        )
        Approval.objects.create(request=tenancy_request, approver=admin, decision=Decision.APPROVE)
        Namespace.objects.create(
            name=namespace_name(tenant.slug, app, tier.slug),
            tenant=tenant,
            tier=tier,
            cluster=cluster,
            cpu_millis=100,
            memory_mib=128,
            request=tenancy_request,
            state=NamespaceState.PENDING,
        )
        ids.append(tenancy_request.pk)
    return ids


# --- local GitOps repositories -------------------------------------------------------------

DEMO_README = (
    "# GitOps repository of a Berth demo tenant\n\n"
    "Berth writes each application's Argo CD, Kargo or Flux definitions under apps/; see\n"
    "docs/gitops-layout.md in Berth's repository.\n"
)


def _git(*args: str, git_dir: Path, stdin: str | None = None) -> str:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_AUTHOR_NAME": "Berth",
        "GIT_AUTHOR_EMAIL": "berth@localhost",
        "GIT_COMMITTER_NAME": "Berth",
        "GIT_COMMITTER_EMAIL": "berth@localhost",
    }
    return subprocess.run(  # noqa: S603 - fixed argv
        ["git", f"--git-dir={git_dir}", *args],  # noqa: S607 - git from PATH
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


def ensure_git_repo(path: Path) -> str:
    """A bare repository with branch main and a first commit (a README), made once.
    Returns its file:// URL."""
    if not (path / "HEAD").exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(  # noqa: S603 - fixed argv, the path after `--`
            ["git", "init", "--quiet", "--bare", "-b", "main", "--", str(path)],  # noqa: S607 - git from PATH
            check=True,
            capture_output=True,
        )
    has_main = subprocess.run(  # noqa: S603 - fixed argv, the repository in an option's value
        ["git", f"--git-dir={path}", "rev-parse", "--verify", "--quiet", "refs/heads/main"],  # noqa: S607 - git from PATH
        capture_output=True,
    )
    if has_main.returncode != 0:
        blob = _git("hash-object", "-w", "--stdin", git_dir=path, stdin=DEMO_README)
        tree = _git("mktree", git_dir=path, stdin=f"100644 blob {blob}\tREADME.md\n")
        commit = _git("commit-tree", tree, "-m", "Initial commit", git_dir=path)
        _git("update-ref", "refs/heads/main", commit, git_dir=path)
    return path.resolve().as_uri()


def _earlier_demo_url(tenant: Tenant) -> bool:
    """A URL an earlier `make run` gave this demo tenant: its file:// repository (which
    Flux cannot read: the Flux CRD takes http, https and ssh URLs only; nor Argo CD or Kargo
    in a cluster), or the demo git server's on another port."""
    url = tenant.gitops_repo_url
    local = url.startswith("file://") and url.endswith(f"/git/{tenant.slug}.git")
    return bool(local or _served_by_demo(url, tenant.slug))


def _served_by_demo(url: str, slug: str, *, suffix: str = "") -> bool:
    return bool(
        re.fullmatch(rf"http://127\.0\.0\.1:\d+/{re.escape(slug)}\.git" + re.escape(suffix), url)
    )


def seed_git_repos(git_dir: Path | None = None, *, http_url: str = "") -> dict[str, str]:
    """`make run`: a local bare repository per demo tenant under the data dir
    (`data/git/<tenant>.git`), and each demo tenant pointed at its own over the demo git
    server (`http_url`, portal.gitserver serving `git_dir`), the kind of URL every engine
    reads, with commits linked to the server's commit pages. Without `http_url`, Argo CD
    tenants get the file:// URL and a Flux tenant none. Idempotent; a repository or commit
    link someone configured in the admin instead is left as it is. Every change goes
    through the tenant's own checks (full_clean)."""
    git_dir = git_dir or Path(settings.DATA_DIR) / "git"
    urls = {}
    for spec in TENANTS:
        local = ensure_git_repo(git_dir / f"{spec['slug']}.git")
        tenant = Tenant.objects.get(slug=spec["slug"])
        if http_url:
            url = f"{http_url.rstrip('/')}/{spec['slug']}.git"
        elif tenant.gitops_engine == GitOpsEngine.FLUX:
            continue
        else:
            url = local
        if tenant.gitops_repo_url in ("", url) or _earlier_demo_url(tenant):
            tenant.gitops_repo_url, tenant.gitops_branch = url, "main"
            # The demo git server shows a commit at <repository>/commit/<sha>.
            commit_url = f"{url}/commit/{{sha}}" if http_url else ""
            if tenant.gitops_commit_url == "" or _served_by_demo(
                tenant.gitops_commit_url, spec["slug"], suffix="/commit/{sha}"
            ):
                tenant.gitops_commit_url = commit_url
            tenant.full_clean()
            tenant.save(
                update_fields=[
                    "gitops_repo_url",
                    "gitops_branch",
                    "gitops_path",
                    "gitops_commit_url",
                ]
            )
        urls[spec["slug"]] = url
    return urls
