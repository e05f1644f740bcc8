from __future__ import annotations

from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxLengthValidator, MinValueValidator, URLValidator
from django.db import models

from tenants.choices import (
    ClusterAuth,
    GitOpsEngine,
    GuardrailsMode,
    MembershipSource,
    NamespaceState,
    NetworkPreset,
    PodSecurityLevel,
    Role,
)
from tenants.fields import EncryptedTextField
from tenants.models.prefixes import slug_coverage_problem
from tenants.naming import tier_slug_problem
from tenants.pricing import PRICE_FIELDS, price_problems
from tenants.validators import (
    clean_gitops_fields,
    is_ssh_url,
    known_hosts_problem,
    validate_commit_url_template,
    validate_dns_label,
    validate_group_names,
)

# Leaves room for "-<app>-<tier>" inside a 63-character namespace name.
TENANT_SLUG_MAX = 20


class Tenant(models.Model):
    """A team: the naming prefix, who belongs to it, where its GitOps lives, what it may use."""

    slug = models.CharField(
        max_length=TENANT_SLUG_MAX,
        unique=True,
        validators=[validate_dns_label, MaxLengthValidator(TENANT_SLUG_MAX)],
        help_text="DNS label; every namespace of the tenant starts with it.",
    )
    name = models.CharField(max_length=200)
    owner_groups = models.JSONField(
        default=list,
        blank=True,
        help_text="OIDC groups of owners.",
        validators=[validate_group_names],
    )
    member_groups = models.JSONField(
        default=list,
        blank=True,
        help_text="OIDC groups of members.",
        validators=[validate_group_names],
    )
    viewer_groups = models.JSONField(
        default=list,
        blank=True,
        help_text="OIDC groups of viewers.",
        validators=[validate_group_names],
    )

    gitops_repo_url = models.CharField("GitOps repository URL", max_length=500, blank=True)
    gitops_branch = models.CharField(max_length=200, default="main")
    gitops_path = models.CharField("base path in the repository", max_length=300, blank=True)
    gitops_credentials = EncryptedTextField(
        blank=True, help_text="HTTPS token (or user:token) or SSH deploy key; encrypted at rest."
    )
    gitops_known_hosts = models.TextField(
        "SSH known_hosts of the GitOps host",
        blank=True,
        help_text="For an SSH repository read by Flux, which checks the host's key: its "
        "known_hosts line(s), as `ssh-keyscan <host>` prints them.",
    )
    gitops_engine = models.CharField(
        max_length=20, choices=GitOpsEngine.choices, default=GitOpsEngine.ARGOCD
    )
    gitops_commit_url = models.CharField(
        "commit link",
        max_length=500,
        blank=True,
        validators=[validate_commit_url_template],
        help_text="The repository's web page of one commit, with {sha} where the commit goes "
        "(e.g. https://forge.example/org/repo/commit/{sha}); commits are shown as links.",
    )

    budget_cpu_millis = models.PositiveIntegerField("CPU budget (millicores)", default=8000)
    budget_memory_mib = models.PositiveIntegerField("memory budget (MiB)", default=16384)
    budget_storage_gib = models.PositiveIntegerField("storage budget (GiB)", default=100)
    budget_namespaces = models.PositiveIntegerField("namespace budget", default=10)

    allowed_clusters = models.ManyToManyField("Cluster", blank=True, related_name="tenants")
    allowed_tiers = models.ManyToManyField("EnvironmentTier", blank=True, related_name="tenants")
    allowed_domains = models.JSONField(
        default=list, blank=True, help_text="DNS domains the tenant's Ingresses may serve."
    )
    notify_emails = models.JSONField(
        default=list, blank=True, help_text="Addresses told about every request of the tenant."
    )
    webhook_url = models.CharField(
        max_length=500,
        blank=True,
        validators=[URLValidator(schemes=["http", "https"])],
        help_text="Receives a signed JSON event for every request state change.",
    )
    webhook_secret = EncryptedTextField(
        blank=True, help_text="Signs webhook bodies (HMAC-SHA256); encrypted at rest."
    )
    # Whether Berth can read the repository, asked of a worker after onboarding or a change
    # of the repository settings (tenants.tasks.check_repository): queued, then answered.
    repository_check_queued_at = models.DateTimeField(null=True, blank=True, editable=False)
    repository_check_ok = models.BooleanField(null=True, blank=True, editable=False)
    repository_check_message = models.TextField(blank=True, editable=False)
    repository_checked_at = models.DateTimeField(null=True, blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    # Set when its last cluster was cleaned by a tenant decommission asked to retire it: no
    # new request, gone from its members' lists; its records and audit trail stay.
    retired_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.slug

    def clean(self) -> None:
        slugs = dict(Tenant.objects.values_list("pk", "slug"))
        stored = slugs.pop(self.pk, None)
        # `<slug>-*` must match only this tenant's namespaces (Argo CD destinations, naming).
        clashes = [
            other
            for other in slugs.values()
            if other.startswith(f"{self.slug}-") or self.slug.startswith(f"{other}-")
        ]
        if clashes:
            raise ValidationError(
                {
                    "slug": (
                        f"{self.slug!r} and {clashes[0]!r} would share a namespace prefix: "
                        "one tenant's namespaces would match the other's."
                    )
                }
            )
        # ... nor anything else's. Checked when the slug is chosen: a platform namespace
        # that comes under an existing prefix later is reported on the Names page rather
        # than blocking the tenant's other changes.
        if self.slug != stored:
            covered = slug_coverage_problem(self.slug, tenant=self)
            if covered:
                raise ValidationError({"slug": covered})
        # What git and the engines are handed: checked here too, whoever saves the tenant.
        self.gitops_path = clean_gitops_fields(
            self.gitops_repo_url, self.gitops_branch, self.gitops_path
        )
        problem = known_hosts_problem(self.gitops_known_hosts)
        if problem:
            raise ValidationError({"gitops_known_hosts": problem})
        if self.gitops_engine == GitOpsEngine.FLUX and self.flux_problem():
            field = "gitops_known_hosts" if "host key" in self.flux_problem() else "gitops_repo_url"
            raise ValidationError({field: self.flux_problem()})

    def commit_link(self, sha: str) -> str:
        """The web page of one of the repository's commits, or "" when none is configured."""
        return self.gitops_commit_url.replace("{sha}", sha) if self.gitops_commit_url else ""

    def flux_problem(self) -> str | None:
        """Why Flux could not read this tenant's repository: it reads https:// and SSH URLs
        only, and an SSH repository only knowing its host key."""
        url = self.gitops_repo_url.strip()
        if url and not (url.startswith(("https://", "http://")) or is_ssh_url(url)):
            return (
                "Flux reads https:// and SSH repositories only (not git:// or file://): "
                "give the repository's https:// or SSH URL."
            )
        if self.gitops_credentials and is_ssh_url(url) and not self.gitops_known_hosts.strip():
            return (
                "Flux reads this SSH repository only knowing its host key: add the "
                "host's known_hosts line(s) (`ssh-keyscan <host>`)."
            )
        return None

    def groups_for(self, role: str) -> list[str]:
        return {
            Role.OWNER: self.owner_groups,
            Role.MEMBER: self.member_groups,
            Role.VIEWER: self.viewer_groups,
        }[role]


class Membership(models.Model):
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=10, choices=Role.choices)
    source = models.CharField(
        max_length=10, choices=MembershipSource.choices, default=MembershipSource.OIDC
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "tenant"], name="one_membership_per_tenant")
        ]
        ordering = ["tenant__slug", "user__username"]

    def __str__(self) -> str:
        return f"{self.user} is {self.role} of {self.tenant}"


_LOOPBACK = {"localhost", "127.0.0.1", "::1", "[::1]"}


def _endpoint(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    host = "loopback" if host in _LOOPBACK else host
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:  # a port that is not a number: URLValidator says so
        port = 0
    return host, port


def points_at_berth(url: str) -> bool:
    """Whether `url` is Berth's own web address: a cluster there would have Berth send its
    credentials to itself."""
    if _endpoint(url) == _endpoint(settings.BERTH_BASE_URL):
        return True
    host, port = _endpoint(url)
    named = {
        name.lower()
        for name in settings.ALLOWED_HOSTS
        if name not in _LOOPBACK and not name.startswith(".") and name != "*"
    }
    return host in named and port in (80, 443)


class Cluster(models.Model):
    """A target cluster and how Berth reaches it."""

    name = models.CharField(max_length=63, unique=True, validators=[validate_dns_label])
    display_name = models.CharField(max_length=200, blank=True)
    api_url = models.CharField(
        "API server URL",
        max_length=500,
        blank=True,
        validators=[URLValidator(schemes=["http", "https"])],
    )
    auth_method = models.CharField(
        max_length=20, choices=ClusterAuth.choices, default=ClusterAuth.TOKEN
    )
    credentials = EncryptedTextField(
        blank=True, help_text="Bearer token or kubeconfig, per the auth method; encrypted at rest."
    )
    ca_certificate = models.TextField("CA certificate (PEM)", blank=True)
    argocd_namespace = models.CharField(
        max_length=63, default="argocd", blank=True, validators=[validate_dns_label]
    )
    has_kargo = models.BooleanField(default=False)
    has_flux = models.BooleanField(default=False)
    ingress_namespace = models.CharField(
        max_length=63,
        default="ingress-nginx",
        validators=[validate_dns_label],
        help_text="Namespace of the ingress controller whose traffic tenants' namespaces accept.",
    )
    plan_only = models.BooleanField(
        default=False, help_text="Render plans for this cluster but never apply them."
    )
    is_sandbox = models.BooleanField(
        default=False, help_text="A local Kubernetes API stand-in, for development."
    )
    argocd_repository_secrets = models.BooleanField(
        "writes Argo CD repository Secrets",
        default=True,
        help_text="Berth writes each tenant's repository credential into Argo CD's namespace "
        "(scoped to the tenant's AppProject). That needs write access to Secrets there (the "
        "chart's rbac.argocdRepositorySecrets); off: register tenants' repositories in Argo CD "
        "yourself.",
    )
    argocd_impersonation = models.BooleanField(
        "Argo CD impersonation",
        default=False,
        help_text="Argo CD here (2.13 or later) has application.sync.impersonation.enabled: "
        "tenants' syncs run as each namespace's berth-gitops ServiceAccount.",
    )
    guardrails = models.CharField(
        max_length=20,
        choices=GuardrailsMode.choices,
        default=GuardrailsMode.BERTH,
        help_text="Berth's: tenant namespaces are provisioned only once Berth's admission "
        "policies and tenant roles are installed and current here. The platform's own: "
        "you fence tenants with your own admission control, and Berth does not check it.",
    )
    # What "Install guardrails" last put here: the digest of those objects, and when.
    guardrails_digest = models.CharField(max_length=64, blank=True)
    guardrails_installed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        if self.api_url and points_at_berth(self.api_url):
            raise ValidationError(
                {
                    "api_url": (
                        f"{self.api_url} is Berth's own address ({settings.BERTH_BASE_URL}), not a "
                        "Kubernetes API server."
                    )
                }
            )


class EnvironmentTier(models.Model):
    """A preset for a kind of environment: how big, how isolated, who may write, who approves."""

    slug = models.CharField(max_length=20, unique=True, validators=[validate_dns_label])
    name = models.CharField(max_length=100)
    position = models.PositiveSmallIntegerField(default=0, help_text="Order in promotion.")

    default_cpu_millis = models.PositiveIntegerField(default=1000)
    default_memory_mib = models.PositiveIntegerField(default=2048)
    default_storage_gib = models.PositiveIntegerField(default=10)
    max_cpu_millis = models.PositiveIntegerField(default=4000)
    max_memory_mib = models.PositiveIntegerField(default=8192)
    max_storage_gib = models.PositiveIntegerField(default=50)

    # LimitRange defaults for containers that do not say what they need.
    container_default_cpu_millis = models.PositiveIntegerField(default=500)
    container_default_memory_mib = models.PositiveIntegerField(default=512)
    container_request_cpu_millis = models.PositiveIntegerField(default=100)
    container_request_memory_mib = models.PositiveIntegerField(default=128)

    network_preset = models.CharField(
        max_length=20, choices=NetworkPreset.choices, default=NetworkPreset.INGRESS
    )
    pod_security_level = models.CharField(
        max_length=20, choices=PodSecurityLevel.choices, default=PodSecurityLevel.RESTRICTED
    )
    # ClusterRoles bound to the tenant's groups in namespaces of this tier. The defaults are
    # the roles Berth ships (provisioning.guardrails; "Install guardrails" puts them on a
    # cluster): Kubernetes' edit/view without writes to quota, limits and RBAC. The
    # built-in edit, admin and cluster-admin are refused at provisioning: they let a team
    # undo its own guardrails.
    owner_cluster_role = models.CharField(max_length=100, default="berth-tenant-edit")
    member_cluster_role = models.CharField(max_length=100, default="berth-tenant-edit")
    viewer_cluster_role = models.CharField(max_length=100, default="berth-tenant-view")

    is_ephemeral = models.BooleanField(default=False)
    default_ttl = models.DurationField(null=True, blank=True)
    max_ttl = models.DurationField(null=True, blank=True)
    auto_repair_drift = models.BooleanField(default=False)

    class Meta:
        ordering = ["position", "slug"]
        verbose_name = "environment tier"

    def __str__(self) -> str:
        return self.slug

    def clean(self) -> None:
        problem = tier_slug_problem(self.slug)
        if problem:
            raise ValidationError({"slug": problem})

    def cluster_role_for(self, role: str) -> str:
        return {
            Role.OWNER: self.owner_cluster_role,
            Role.MEMBER: self.member_cluster_role,
            Role.VIEWER: self.viewer_cluster_role,
        }[role]


class Project(models.Model):
    """A tenant's application, promoted through its environments."""

    tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT, related_name="projects")
    name = models.CharField(max_length=63, validators=[validate_dns_label])
    gitops_engine = models.CharField(
        max_length=20, choices=GitOpsEngine.choices, default=GitOpsEngine.ARGOCD
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant", "name"], name="unique_project_per_tenant")
        ]
        ordering = ["tenant__slug", "name"]

    def __str__(self) -> str:
        return f"{self.tenant.slug}/{self.name}"


class Namespace(models.Model):
    """A namespace Berth provisioned (or is provisioning) on a cluster."""

    name = models.CharField(max_length=63, validators=[validate_dns_label])
    tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT, related_name="namespaces")
    tier = models.ForeignKey(EnvironmentTier, on_delete=models.PROTECT, related_name="namespaces")
    cluster = models.ForeignKey(Cluster, on_delete=models.PROTECT, related_name="namespaces")
    project = models.ForeignKey(
        Project, on_delete=models.PROTECT, null=True, blank=True, related_name="environments"
    )
    cpu_millis = models.PositiveIntegerField(validators=[MinValueValidator(1)])
    memory_mib = models.PositiveIntegerField(validators=[MinValueValidator(1)])
    storage_gib = models.PositiveIntegerField(default=0)
    labels = models.JSONField(default=dict, blank=True)
    state = models.CharField(
        max_length=20, choices=NamespaceState.choices, default=NamespaceState.PENDING
    )
    expires_at = models.DateTimeField(null=True, blank=True)
    request = models.ForeignKey(
        "Request",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        help_text="The request that created this namespace.",
    )
    # Reconcile's last finding: [{"object", "status": missing|changed|unexpected, "detail"}].
    drift = models.JSONField(default=list, blank=True)
    drift_checked_at = models.DateTimeField(null=True, blank=True)
    # The definitions its objects were last applied from (provisioning or a campaign); none:
    # made before Berth recorded them.
    tier_revision = models.ForeignKey(
        "TierRevision", on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    bundle_revision = models.ForeignKey(
        "BundleRevision", on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["cluster", "name"],
                condition=~models.Q(state=NamespaceState.DECOMMISSIONED),
                name="unique_live_namespace_per_cluster",
            )
        ]
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class TruthTable(models.Model):
    """The last comparison of everything Berth owns for a tenant: what the database says
    should exist, what its repository holds, what the clusters hold (taken by the engine,
    provisioning.engine.truth; on demand and by beat)."""

    tenant = models.OneToOneField(Tenant, on_delete=models.CASCADE, related_name="truth_table")
    taken_at = models.DateTimeField()
    # [{"source": cluster|git, "cluster", "object", "namespace", "state", "detail", "db",
    #   "git", "live", "engine"}]
    rows = models.JSONField(default=list, blank=True)
    counts = models.JSONField(default=dict, blank=True)  # state -> rows in it
    problems = models.JSONField(default=list, blank=True)  # what could not be read

    def __str__(self) -> str:
        return f"truth table of {self.tenant} at {self.taken_at:%Y-%m-%d %H:%M}"


class ClusterPrice(models.Model):
    """What a unit of allocated quota costs on one cluster (showback): set by platform
    admins, applied to every namespace's lifetime on it (tenants.selectors.costs)."""

    cluster = models.OneToOneField(Cluster, on_delete=models.CASCADE, related_name="price")
    currency = models.CharField(max_length=3, default="EUR")
    cpu_core_hour = models.DecimalField(max_digits=13, decimal_places=6, default=0)
    memory_gib_hour = models.DecimalField(max_digits=13, decimal_places=6, default=0)
    storage_gib_month = models.DecimalField(max_digits=13, decimal_places=6, default=0)
    namespace_month = models.DecimalField(max_digits=13, decimal_places=6, default=0)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"prices on {self.cluster}"

    def clean(self) -> None:
        problems = price_problems(
            {name: getattr(self, name) for name in [*PRICE_FIELDS, "currency"]}
        )
        if problems:
            raise ValidationError(problems)
