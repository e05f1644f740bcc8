"""Tenants: the teams, who belongs to each, and the last comparison of all they own."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxLengthValidator, URLValidator
from django.db import models

from tenants.choices import ForgeKind, GitOpsEngine, MembershipSource, Role
from tenants.fields import EncryptedTextField
from tenants.models.prefixes import slug_coverage_problem
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
    # Merge-request mode: the request's commit goes to a branch of its own and a pull request
    # opened on the forge; the request goes on once a reviewer merges it. A tier's own
    # setting wins over this one for its namespaces (EnvironmentTier.changes_by_pull_request).
    changes_by_pull_request = models.BooleanField(
        "changes reach the repository through a pull request",
        default=False,
        help_text="Berth pushes each request's commit to a branch berth/request-<id> and opens a "
        "pull request; the request goes on once it is merged. A tier's own setting wins.",
    )
    forge_kind = models.CharField(
        max_length=10, choices=ForgeKind.choices, default=ForgeKind.GITHUB
    )
    forge_api_url = models.CharField(
        "forge API URL",
        max_length=500,
        blank=True,
        validators=[URLValidator(schemes=["http", "https"])],
        help_text="Where the forge's REST API answers: https://api.github.com, or "
        "https://<host>/api/v3 for GitHub Enterprise.",
    )
    forge_token = EncryptedTextField(
        blank=True, help_text="Opens and reads pull requests on the forge; encrypted at rest."
    )
    forge_webhook_secret = EncryptedTextField(
        blank=True,
        help_text="Checks the signature of the forge's pull request events; encrypted at rest.",
    )

    budget_cpu_millis = models.PositiveIntegerField("CPU budget (millicores)", default=8000)
    budget_memory_mib = models.PositiveIntegerField("memory budget (MiB)", default=16384)
    budget_storage_gib = models.PositiveIntegerField("storage budget (GiB)", default=100)
    budget_namespaces = models.PositiveIntegerField("namespace budget", default=10)
    monthly_cost_alert = models.DecimalField(
        "monthly cost alert",
        max_digits=12,
        decimal_places=2,
        null=True,
        blank=True,
        help_text="Owners are told when the month's cost passes 80 % and 100 % of this "
        "amount (in the tenant's showback currency); empty: no cost alert.",
    )

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
            covered = slug_coverage_problem(self.slug, tenant_id=self.pk)
            if covered:
                raise ValidationError({"slug": covered})
        # What git and the engines are handed: checked here too, whoever saves the tenant.
        self.gitops_path = clean_gitops_fields(
            self.gitops_repo_url, self.gitops_branch, self.gitops_path
        )
        problem = known_hosts_problem(self.gitops_known_hosts)
        if problem:
            raise ValidationError({"gitops_known_hosts": problem})
        problem = self.forge_problem()
        if problem:
            raise ValidationError(problem)
        if self.gitops_engine == GitOpsEngine.FLUX and self.flux_problem():
            field = "gitops_known_hosts" if "host key" in self.flux_problem() else "gitops_repo_url"
            raise ValidationError({field: self.flux_problem()})

    def forge_problem(self) -> dict[str, str] | None:
        """Why pull requests could not be opened for this tenant, by field (None: they can,
        or the tenant pushes directly)."""
        if not self.changes_by_pull_request:
            return None
        if not self.gitops_repo_url.strip():
            return {"changes_by_pull_request": "Pull requests need a GitOps repository."}
        if self.forge_kind not in (ForgeKind.GITHUB, ForgeKind.GITLAB, ForgeKind.GITEA):
            return {
                "forge_kind": "Berth opens pull requests on GitHub, GitHub Enterprise, GitLab, "
                f"Gitea and Forgejo; {self.get_forge_kind_display()} is not one of them."
            }
        if not self.forge_api_url.strip():
            return {"forge_api_url": "Pull requests need the forge's API URL."}
        if not self.forge_token:
            return {"forge_token": "Pull requests need a forge token."}
        return None

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


class TruthTable(models.Model):
    """The last comparison of everything Berth owns for a tenant: what the database says
    should exist, what its repository holds, what the clusters hold (taken by the engine,
    provisioning.jobs.truth; on demand and by beat)."""

    tenant = models.OneToOneField(Tenant, on_delete=models.CASCADE, related_name="truth_table")
    taken_at = models.DateTimeField()
    # [{"source": cluster|git, "cluster", "object", "namespace", "state", "detail", "db",
    #   "git", "live", "engine"}]
    rows = models.JSONField(default=list, blank=True)
    counts = models.JSONField(default=dict, blank=True)  # state -> rows in it
    problems = models.JSONField(default=list, blank=True)  # what could not be read

    def __str__(self) -> str:
        return f"truth table of {self.tenant} at {self.taken_at:%Y-%m-%d %H:%M}"
