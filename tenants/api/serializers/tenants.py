"""Tenants (with their budget), clusters and environment tiers."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from tenants import selectors
from tenants.api.serializers.fields import SlugReference, group_list, secret
from tenants.choices import GitOpsEngine
from tenants.egress import forge_url_problem, webhook_url_problem
from tenants.models import Cluster, EnvironmentTier, Tenant
from tenants.validators import clean_repo_path, validate_branch, validate_repo_url


class TenantSerializer(serializers.ModelSerializer):
    owner_groups = group_list(required=False)
    member_groups = group_list(required=False)
    viewer_groups = group_list(required=False)
    allowed_clusters = SlugReference(
        many=True, slug_field="name", queryset=Cluster.objects.all(), required=False
    )
    allowed_tiers = SlugReference(
        many=True, slug_field="slug", queryset=EnvironmentTier.objects.all(), required=False
    )
    allowed_domains = serializers.ListField(
        child=serializers.CharField(max_length=253), max_length=100, required=False
    )
    notify_emails = serializers.ListField(
        child=serializers.EmailField(), max_length=100, required=False
    )
    gitops_credentials = secret(
        max_length=20000,
        style={"input_type": "password"},
        help_text="HTTPS token or SSH deploy key; stored encrypted, never returned.",
    )
    gitops_credentials_set = serializers.SerializerMethodField()
    gitops_known_hosts = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=20000,
        help_text="For an SSH repository read by Flux: the host's known_hosts line(s).",
    )
    webhook_secret = secret(
        max_length=500, help_text="Signs webhook bodies; stored encrypted, never returned."
    )
    webhook_secret_set = serializers.SerializerMethodField()
    forge_token = secret(
        max_length=2000,
        style={"input_type": "password"},
        help_text="Opens and reads the tenant's pull requests on its forge (merge-request "
        "mode); stored encrypted, never returned.",
    )
    forge_token_set = serializers.SerializerMethodField()
    forge_webhook_secret = secret(
        max_length=500,
        help_text="Checks the signature of the forge's pull request events "
        "(X-Hub-Signature-256); stored encrypted, never returned.",
    )
    forge_webhook_secret_set = serializers.SerializerMethodField()
    confirm_removals = serializers.BooleanField(
        write_only=True,
        required=False,
        help_text="Set to true to empty a role's groups while people hold that role.",
    )
    role = serializers.SerializerMethodField(help_text="Your role in the tenant, if any.")
    live_namespace_count = serializers.SerializerMethodField()

    class Meta:
        model = Tenant
        fields = [
            "id",
            "slug",
            "name",
            "role",
            "owner_groups",
            "member_groups",
            "viewer_groups",
            "gitops_repo_url",
            "gitops_branch",
            "gitops_path",
            "gitops_engine",
            "gitops_commit_url",
            "gitops_credentials",
            "gitops_credentials_set",
            "gitops_known_hosts",
            "budget_cpu_millis",
            "budget_memory_mib",
            "budget_storage_gib",
            "budget_namespaces",
            "allowed_clusters",
            "allowed_tiers",
            "allowed_domains",
            "notify_emails",
            "webhook_url",
            "webhook_secret",
            "webhook_secret_set",
            "changes_by_pull_request",
            "forge_kind",
            "forge_api_url",
            "forge_token",
            "forge_token_set",
            "forge_webhook_secret",
            "forge_webhook_secret_set",
            "confirm_removals",
            "live_namespace_count",
            "created_at",
        ]
        read_only_fields = ["id", "created_at"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.instance is not None and not isinstance(self.instance, list | tuple):
            self.fields["slug"].read_only = True

    def validate_webhook_url(self, value: str) -> str:
        problem = webhook_url_problem(value)
        if problem:
            raise serializers.ValidationError(problem)
        return value.strip()

    def validate_forge_api_url(self, value: str) -> str:
        problem = forge_url_problem(value)
        if problem:
            raise serializers.ValidationError(problem)
        return value.strip()

    # The repository fields: the checks the form, the admin and Tenant.clean() make too.
    def validate_gitops_repo_url(self, value: str) -> str:
        validate_repo_url(value)
        return value

    def validate_gitops_branch(self, value: str) -> str:
        validate_branch(value)
        return value

    def validate_gitops_path(self, value: str) -> str:
        return clean_repo_path(value)

    def get_gitops_credentials_set(self, tenant: Tenant) -> bool:
        return bool(tenant.gitops_credentials)

    def get_webhook_secret_set(self, tenant: Tenant) -> bool:
        return bool(tenant.webhook_secret)

    def get_forge_token_set(self, tenant: Tenant) -> bool:
        return bool(tenant.forge_token)

    def get_forge_webhook_secret_set(self, tenant: Tenant) -> bool:
        return bool(tenant.forge_webhook_secret)

    def get_role(self, tenant: Tenant) -> str | None:
        return self.context.get("roles", {}).get(tenant.pk)

    def get_live_namespace_count(self, tenant: Tenant) -> int:
        return getattr(tenant, "live_namespace_count", 0)


class BudgetQuantitySerializer(serializers.Serializer):
    used = serializers.CharField(
        help_text="A Kubernetes quantity, e.g. 1500m, 2Gi, 10Gi: in_use + requested."
    )
    in_use = serializers.CharField(help_text="What live namespaces hold.")
    requested = serializers.CharField(
        help_text="What requests claim on top: namespaces not live yet, pending quota increases."
    )
    total = serializers.CharField()
    left = serializers.CharField()


class BudgetCountSerializer(serializers.Serializer):
    used = serializers.IntegerField()
    in_use = serializers.IntegerField()
    requested = serializers.IntegerField()
    total = serializers.IntegerField()
    left = serializers.IntegerField()


class BudgetSerializer(serializers.Serializer):
    cpu = BudgetQuantitySerializer()
    memory = BudgetQuantitySerializer()
    storage = BudgetQuantitySerializer()
    namespaces = BudgetCountSerializer()


class RepositoryCheckSerializer(serializers.Serializer):
    status = serializers.ChoiceField(
        choices=["pending", "ok", "failed", "not_checked"],
        help_text="pending: queued for a worker; ok: Berth read the repository and pushed "
        "to it; failed: it could not (the message says what failed); not_checked: the check "
        "could not be queued.",
    )
    message = serializers.CharField(allow_blank=True)
    checked_at = serializers.DateTimeField(
        allow_null=True, help_text="When the answer came; null while pending."
    )


class TenantDetailSerializer(TenantSerializer):
    """One tenant, with what it uses of its budget (a few queries per tenant, so lists of
    tenants leave it out)."""

    budget = serializers.SerializerMethodField(
        help_text="What the tenant's requested, live and departing namespaces and pending "
        "quota increases take of its budget; `left` is never negative."
    )
    repository_check = serializers.SerializerMethodField(
        help_text="Whether Berth can write the repository with the tenant's credential (git "
        "ls-remote, then a throwaway ref pushed and deleted), checked by a worker after "
        "onboarding and after each change of the repository settings: pending until the "
        "answer comes, not_checked when it could not be queued; null if never checked. "
        "While it says failed, the tenant's new requests are refused."
    )

    class Meta(TenantSerializer.Meta):
        fields = [*TenantSerializer.Meta.fields, "budget", "repository_check"]

    @extend_schema_field(RepositoryCheckSerializer(allow_null=True))
    def get_repository_check(self, tenant: Tenant) -> dict[str, Any] | None:
        if tenant.repository_check_queued_at is None:
            return None
        if tenant.repository_check_ok is None and tenant.repository_checked_at is None:
            return {"status": "pending", "message": "Queued for a worker.", "checked_at": None}
        if tenant.repository_check_ok is None:
            return {
                "status": "not_checked",
                "message": tenant.repository_check_message,
                "checked_at": serializers.DateTimeField().to_representation(
                    tenant.repository_checked_at
                ),
            }
        return {
            "status": "ok" if tenant.repository_check_ok else "failed",
            "message": tenant.repository_check_message,
            "checked_at": serializers.DateTimeField().to_representation(
                tenant.repository_checked_at
            ),
        }

    @extend_schema_field(BudgetSerializer)
    def get_budget(self, tenant: Tenant) -> dict[str, Any]:
        return {
            row["key"]: {
                "used": row["used"],
                "in_use": row["live"],
                "requested": row["requested"],
                "total": row["total"],
                "left": row["left"],
            }
            for row in selectors.budget_summary(tenant)
        }


class TenantCreateSerializer(TenantSerializer):
    """Onboarding: what services.onboard_tenant takes. Webhooks are set afterwards (PATCH)."""

    budget_cpu_millis = serializers.IntegerField(min_value=1, max_value=2**31 - 1, default=8000)
    budget_memory_mib = serializers.IntegerField(min_value=1, max_value=2**31 - 1, default=16384)
    budget_storage_gib = serializers.IntegerField(min_value=0, max_value=2**31 - 1, default=100)
    budget_namespaces = serializers.IntegerField(min_value=1, max_value=2**31 - 1, default=10)
    gitops_engine = serializers.ChoiceField(
        choices=GitOpsEngine.choices, default=GitOpsEngine.ARGOCD
    )

    class Meta(TenantSerializer.Meta):
        read_only_fields = ["id", "created_at", "webhook_url"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields.pop("webhook_secret")
        self.fields.pop("forge_webhook_secret")


class ClusterSerializer(serializers.ModelSerializer):
    credentials = secret(
        max_length=100000,
        style={"input_type": "password"},
        help_text="Bearer token or kubeconfig, per auth_method; stored encrypted, never returned.",
    )
    credentials_set = serializers.SerializerMethodField()

    class Meta:
        model = Cluster
        fields = [
            "id",
            "name",
            "display_name",
            "api_url",
            "auth_method",
            "credentials",
            "credentials_set",
            "ca_certificate",
            "argocd_namespace",
            "argocd_url",
            "argocd_repository_secrets",
            "has_kargo",
            "has_flux",
            "ingress_namespace",
            "plan_only",
            "is_sandbox",
            "created_at",
        ]
        read_only_fields = ["id", "created_at"]
        extra_kwargs = {"name": {"validators": []}}  # uniqueness: the service's full_clean

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.instance is not None and not isinstance(self.instance, list | tuple):
            self.fields["name"].read_only = True

    def get_credentials_set(self, cluster: Cluster) -> bool:
        return bool(cluster.credentials)


class TierSerializer(serializers.ModelSerializer):
    version = serializers.SerializerMethodField(
        help_text=(
            "The revision number of its definition as it stands (namespaces record the one "
            "they run); null before it was recorded."
        )
    )

    class Meta:
        model = EnvironmentTier
        exclude: list[str] = []

    @extend_schema_field(serializers.IntegerField(allow_null=True))
    def get_version(self, tier: EnvironmentTier) -> int | None:
        return selectors.tier_version(tier)
