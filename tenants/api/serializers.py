"""What the API reads and writes. Serializers shape data; they never save: the views hand
validated data to tenants.services. Request payloads are validated per kind by
tenants.payloads (inside services.submit_request), exactly as for the web forms."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from tenants import quantities, selectors
from tenants.choices import EndCause, GitOpsEngine, RequestKind
from tenants.models import (
    ApiToken,
    Approval,
    AuditEvent,
    Cluster,
    Comment,
    EnvironmentTier,
    EphemeralEnvironment,
    Namespace,
    Project,
    Request,
    Run,
    Tenant,
)
from tenants.payloads import TtlField

MAX_TEXT = 4000


class SlugReference(serializers.SlugRelatedField):
    """A reference by name or slug, refused before the database sees it if it cannot be one
    (PostgreSQL refuses NUL characters in text outright)."""

    def to_internal_value(self, data: Any) -> Any:
        if not isinstance(data, str) or "\x00" in data or len(data) > 100:
            self.fail("invalid")
        return super().to_internal_value(data)


def _groups(**kwargs: Any) -> serializers.ListField:
    return serializers.ListField(
        child=serializers.CharField(max_length=200), max_length=100, **kwargs
    )


# --- tenants, clusters, tiers --------------------------------------------------------------


class TenantSerializer(serializers.ModelSerializer):
    owner_groups = _groups(required=False)
    member_groups = _groups(required=False)
    viewer_groups = _groups(required=False)
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
    gitops_credentials = serializers.CharField(
        write_only=True, required=False, allow_blank=True, max_length=20000,
        style={"input_type": "password"},
        help_text="HTTPS token or SSH deploy key; stored encrypted, never returned.",
    )
    gitops_credentials_set = serializers.SerializerMethodField()
    webhook_secret = serializers.CharField(
        write_only=True, required=False, allow_blank=True, max_length=500,
        help_text="Signs webhook bodies; stored encrypted, never returned.",
    )
    webhook_secret_set = serializers.SerializerMethodField()
    role = serializers.SerializerMethodField(help_text="Your role in the tenant, if any.")
    live_namespace_count = serializers.SerializerMethodField()

    class Meta:
        model = Tenant
        fields = [
            "id", "slug", "name", "role", "owner_groups", "member_groups", "viewer_groups",
            "gitops_repo_url", "gitops_branch", "gitops_path", "gitops_engine",
            "gitops_credentials", "gitops_credentials_set",
            "budget_cpu_millis", "budget_memory_mib", "budget_storage_gib",
            "budget_namespaces", "allowed_clusters", "allowed_tiers", "allowed_domains",
            "notify_emails", "webhook_url", "webhook_secret", "webhook_secret_set",
            "live_namespace_count", "created_at",
        ]
        read_only_fields = ["id", "created_at"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.instance is not None and not isinstance(self.instance, list | tuple):
            self.fields["slug"].read_only = True

    def get_gitops_credentials_set(self, tenant: Tenant) -> bool:
        return bool(tenant.gitops_credentials)

    def get_webhook_secret_set(self, tenant: Tenant) -> bool:
        return bool(tenant.webhook_secret)

    def get_role(self, tenant: Tenant) -> str | None:
        return self.context.get("roles", {}).get(tenant.pk)

    def get_live_namespace_count(self, tenant: Tenant) -> int:
        return getattr(tenant, "live_namespace_count", 0)


class BudgetQuantitySerializer(serializers.Serializer):
    used = serializers.CharField(help_text="A Kubernetes quantity, e.g. 1500m, 2Gi, 10Gi.")
    total = serializers.CharField()
    left = serializers.CharField()


class BudgetCountSerializer(serializers.Serializer):
    used = serializers.IntegerField()
    total = serializers.IntegerField()
    left = serializers.IntegerField()


class BudgetSerializer(serializers.Serializer):
    cpu = BudgetQuantitySerializer()
    memory = BudgetQuantitySerializer()
    storage = BudgetQuantitySerializer()
    namespaces = BudgetCountSerializer()


class TenantDetailSerializer(TenantSerializer):
    """One tenant, with what it uses of its budget (a few queries per tenant, so lists of
    tenants leave it out)."""

    budget = serializers.SerializerMethodField(
        help_text="What the tenant's requested, live and departing namespaces and pending "
        "quota increases take of its budget; `left` is never negative."
    )

    class Meta(TenantSerializer.Meta):
        fields = [*TenantSerializer.Meta.fields, "budget"]

    @extend_schema_field(BudgetSerializer)
    def get_budget(self, tenant: Tenant) -> dict[str, Any]:
        return {
            row["key"]: {"used": row["used"], "total": row["total"], "left": row["left"]}
            for row in selectors.budget_summary(tenant)
        }


class TenantCreateSerializer(TenantSerializer):
    """Onboarding: what services.onboard_tenant takes. Webhooks are set afterwards (PATCH)."""

    budget_cpu_millis = serializers.IntegerField(min_value=1, max_value=2**31 - 1, default=8000)
    budget_memory_mib = serializers.IntegerField(min_value=1, max_value=2**31 - 1, default=16384)
    budget_storage_gib = serializers.IntegerField(min_value=0, max_value=2**31 - 1, default=100)
    budget_namespaces = serializers.IntegerField(min_value=1, max_value=2**31 - 1, default=10)
    gitops_engine = serializers.ChoiceField(choices=GitOpsEngine.choices,
                                            default=GitOpsEngine.ARGOCD)

    class Meta(TenantSerializer.Meta):
        read_only_fields = ["id", "created_at", "webhook_url"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields.pop("webhook_secret")


class ClusterSerializer(serializers.ModelSerializer):
    credentials = serializers.CharField(
        write_only=True, required=False, allow_blank=True, max_length=100000,
        style={"input_type": "password"},
        help_text="Bearer token or kubeconfig, per auth_method; stored encrypted, never returned.",
    )
    credentials_set = serializers.SerializerMethodField()

    class Meta:
        model = Cluster
        fields = [
            "id", "name", "display_name", "api_url", "auth_method", "credentials",
            "credentials_set", "ca_certificate", "argocd_namespace", "has_kargo", "has_flux",
            "ingress_namespace", "plan_only", "is_sandbox", "created_at",
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
    class Meta:
        model = EnvironmentTier
        exclude: list[str] = []


# --- requests ------------------------------------------------------------------------------


class RequestSerializer(serializers.ModelSerializer):
    tenant = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    requester = serializers.SlugRelatedField(slug_field="username", read_only=True)
    state_label = serializers.CharField(source="get_state_display", read_only=True)
    payload = serializers.JSONField(read_only=True)

    class Meta:
        model = Request
        fields = [
            "id", "tenant", "kind", "state", "state_label", "status_message", "payload",
            "requester", "policy_rule", "approvals_required", "approver_role", "created_at",
            "updated_at",
        ]
        read_only_fields = fields


class RequestCreateSerializer(serializers.Serializer):
    tenant = serializers.SlugField(max_length=50, help_text="The tenant's slug.")
    kind = serializers.ChoiceField(choices=RequestKind.choices)
    payload = serializers.DictField(
        help_text="Per kind, as on the web form. namespace: app, tier, cluster, cpu, memory, "
        "storage (quantities such as 500m, 2Gi); project: app, engine, cluster, tiers; "
        "environment: project, tier, cluster, cpu, memory, storage; quota_change: namespace, "
        "cpu, memory, storage; decommission: namespace, reason."
    )


class ApprovalSerializer(serializers.ModelSerializer):
    approver = serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=True,
        help_text="Null when the policy approved.",
    )

    class Meta:
        model = Approval
        fields = ["id", "approver", "decision", "reason", "plan_digest", "created_at"]


class CommentSerializer(serializers.ModelSerializer):
    author = serializers.SlugRelatedField(slug_field="username", read_only=True)

    class Meta:
        model = Comment
        fields = ["id", "author", "body", "created_at"]


class HistoryEventSerializer(serializers.ModelSerializer):
    actor = serializers.CharField(source="actor_label")

    class Meta:
        model = AuditEvent
        fields = ["id", "action", "actor", "before", "after", "created_at"]


class PlanSerializer(serializers.Serializer):
    digest = serializers.CharField(help_text="Approvals name it (plan_digest).")
    objects = serializers.ListField(
        child=serializers.DictField(), help_text="The objects to apply, in order."
    )
    deletes = serializers.ListField(child=serializers.DictField())
    yaml = serializers.CharField(help_text="The same plan as YAML documents.")


class RequestPermissionsSerializer(serializers.Serializer):
    may_decide = serializers.BooleanField()
    may_cancel = serializers.BooleanField()
    may_retry = serializers.BooleanField()


class RequestDetailSerializer(RequestSerializer):
    plan = PlanSerializer(allow_null=True, read_only=True,
                          help_text="While the state still has a future plan, else null.")
    plan_error = serializers.CharField(read_only=True)
    approvals = ApprovalSerializer(many=True, read_only=True)
    comments = CommentSerializer(many=True, read_only=True)
    history = HistoryEventSerializer(many=True, read_only=True)
    permissions = RequestPermissionsSerializer(read_only=True,
                                               help_text="What you may do with it now.")

    class Meta(RequestSerializer.Meta):
        fields = [*RequestSerializer.Meta.fields, "plan", "plan_error", "approvals",
                  "comments", "history", "permissions"]
        read_only_fields = fields


class ApproveSerializer(serializers.Serializer):
    plan_digest = serializers.RegexField(
        r"^[0-9a-f]{64}$", help_text="The digest of the plan you approve (from the request)."
    )
    note = serializers.CharField(max_length=2000, required=False, allow_blank=True, default="")


class RejectSerializer(serializers.Serializer):
    reason = serializers.CharField(max_length=2000,
                                   help_text="Why, in words the requester can act on.")


class CommentCreateSerializer(serializers.Serializer):
    body = serializers.CharField(max_length=MAX_TEXT)


class RunSerializer(serializers.ModelSerializer):
    class Meta:
        model = Run
        fields = ["id", "request", "plan_digest", "state", "steps", "attempts", "error",
                  "started_at", "finished_at"]


# --- namespaces, projects, audit ------------------------------------------------------------


class QuotaSerializer(serializers.Serializer):
    cpu = serializers.CharField()
    memory = serializers.CharField()
    storage = serializers.CharField()
    cpu_millis = serializers.IntegerField()
    memory_mib = serializers.IntegerField()
    storage_gib = serializers.IntegerField()


class NamespaceSerializer(serializers.ModelSerializer):
    tenant = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    tier = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    cluster = serializers.SlugRelatedField(slug_field="name", read_only=True)
    project_name = serializers.SerializerMethodField()
    quota = serializers.SerializerMethodField()

    class Meta:
        model = Namespace
        fields = [
            "id", "name", "tenant", "tier", "cluster", "project", "project_name", "state",
            "quota", "labels", "expires_at", "request", "drift", "drift_checked_at",
            "created_at",
        ]
        read_only_fields = fields

    def get_project_name(self, namespace: Namespace) -> str | None:
        return namespace.project.name if namespace.project_id else None

    @extend_schema_field(QuotaSerializer)
    def get_quota(self, namespace: Namespace) -> dict[str, Any]:
        return {
            "cpu": quantities.millis_to_cpu(namespace.cpu_millis),
            "memory": quantities.mib_to_memory(namespace.memory_mib),
            "storage": quantities.gib_to_storage(namespace.storage_gib),
            "cpu_millis": namespace.cpu_millis,
            "memory_mib": namespace.memory_mib,
            "storage_gib": namespace.storage_gib,
        }


class ProjectSerializer(serializers.ModelSerializer):
    tenant = serializers.SlugRelatedField(slug_field="slug", read_only=True)

    class Meta:
        model = Project
        fields = ["id", "tenant", "name", "gitops_engine", "created_at"]
        read_only_fields = fields


class AuditEventSerializer(serializers.ModelSerializer):
    actor = serializers.CharField(source="actor_label", read_only=True)
    tenant = serializers.SlugRelatedField(slug_field="slug", read_only=True, allow_null=True)

    class Meta:
        model = AuditEvent
        fields = ["id", "created_at", "actor", "action", "object_type", "object_id",
                  "object_repr", "tenant", "before", "after", "source_ip"]
        read_only_fields = fields


# --- who am I ------------------------------------------------------------------------------


class MembershipSummarySerializer(serializers.Serializer):
    tenant = serializers.CharField()
    role = serializers.CharField()


class MeSerializer(serializers.Serializer):
    username = serializers.CharField()
    display_name = serializers.CharField()
    is_platform_admin = serializers.BooleanField()
    memberships = MembershipSummarySerializer(many=True)
    authentication = serializers.ChoiceField(choices=["api_token", "oidc_access_token",
                                                      "session"])
    scopes = serializers.ListField(child=serializers.CharField(),
                                   help_text="What this credential may do.")
    token = serializers.DictField(allow_null=True, help_text="The API token, if one is used.")


def token_summary(token: ApiToken) -> dict[str, Any]:
    return {
        "name": token.name,
        "prefix": token.prefix,
        "scopes": token.scopes,
        "expires_at": serializers.DateTimeField().to_representation(token.expires_at)
        if token.expires_at else None,
    }




# --- ephemeral environments -------------------------------------------------------------------


class EphemeralEnvironmentSerializer(serializers.ModelSerializer):
    tenant = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    project = serializers.SlugRelatedField(slug_field="name", read_only=True)
    env_slug = serializers.CharField(source="slug", read_only=True)
    mr_id = serializers.CharField(source="merge_request", read_only=True)
    namespace = serializers.CharField(source="namespace.name", read_only=True,
                                      help_text="The namespace it deploys into.")
    cluster = serializers.CharField(source="namespace.cluster.name", read_only=True)
    shares_namespace = serializers.SerializerMethodField(
        help_text="True when the namespace is a shared one that outlives it.")
    rule = serializers.IntegerField(source="rule_position", read_only=True, allow_null=True,
                                    help_text="The environment rule that named the namespace "
                                              "(null: the default template).")
    request_state = serializers.CharField(source="request.state", read_only=True)
    end_cause = serializers.ChoiceField(choices=EndCause.choices, allow_blank=True,
                                        read_only=True, help_text="Empty until it ends.")

    class Meta:
        model = EphemeralEnvironment
        fields = ["id", "tenant", "project", "env_slug", "branch", "mr_id", "namespace",
                  "cluster", "shares_namespace", "rule", "state", "expires_at",
                  "max_expires_at", "warned_at", "ended_at", "end_cause", "request",
                  "request_state", "created_at"]
        read_only_fields = fields

    def get_shares_namespace(self, environment: EphemeralEnvironment) -> bool:
        return not environment.owns_namespace


class EphemeralEnvironmentCreateSerializer(serializers.Serializer):
    """The tenant; everything else is the environment's payload (validated by the service)."""

    tenant = serializers.SlugField()
    project = serializers.CharField()
    env_slug = serializers.CharField(help_text="CI_ENVIRONMENT_SLUG, e.g. review-42.")
    branch = serializers.CharField(required=False, allow_blank=True)
    mr_id = serializers.CharField(required=False, allow_blank=True)
    cluster = serializers.CharField(required=False)
    tier = serializers.CharField(required=False, help_text="An ephemeral tier; the tenant's "
                                                           "first one when left out.")
    ttl = serializers.CharField(required=False, help_text="e.g. 30m, 2h, 3d (the tier's "
                                                          "default TTL when left out).")
    cpu = serializers.CharField(required=False)
    memory = serializers.CharField(required=False)
    storage = serializers.CharField(required=False)


class EphemeralEnvironmentPreviewSerializer(serializers.Serializer):
    namespace = serializers.CharField()
    cluster = serializers.CharField()
    tier = serializers.CharField()
    rule = serializers.IntegerField(allow_null=True)
    shares_namespace = serializers.BooleanField()
    creates_namespace = serializers.BooleanField()
    ttl_seconds = serializers.IntegerField()


class EnvironmentStopSerializer(serializers.Serializer):
    tenant = serializers.SlugField()
    project = serializers.CharField()
    env_slug = serializers.CharField()
    reason = serializers.CharField(max_length=500, required=False, allow_blank=True, default="")


class EnvironmentEndSerializer(serializers.Serializer):
    reason = serializers.CharField(max_length=500, required=False, allow_blank=True, default="")


class EnvironmentExtendSerializer(serializers.Serializer):
    ttl = TtlField(help_text="How long from now, e.g. 4h or 2d.")


class EnvironmentRuleSerializer(serializers.Serializer):
    # `if` is a Python keyword: the field is declared under another name and renamed.
    condition = serializers.CharField(required=False, allow_blank=True, default="",
                                      max_length=2000)
    namespace = serializers.CharField(required=False, allow_blank=True, default="",
                                      max_length=200)
    refuse = serializers.BooleanField(required=False, default=False)
    message = serializers.CharField(required=False, allow_blank=True, default="",
                                    max_length=300)

    def get_fields(self) -> dict[str, serializers.Field]:
        fields = super().get_fields()
        fields["if"] = fields.pop("condition")
        fields["if"].help_text = ('A CEL expression over tenant, project, env_slug, branch, '
                                  'mr_id, e.g. env_slug.startsWith("review"); empty: always.')
        return fields

    def to_representation(self, instance: Any) -> dict[str, Any]:
        return {
            "if": instance.condition,
            "namespace": instance.namespace_template,
            "refuse": instance.refuse,
            "message": instance.message,
        }


class EnvironmentRulesSerializer(serializers.Serializer):
    rules = EnvironmentRuleSerializer(many=True, help_text="In order; the first match wins.")
