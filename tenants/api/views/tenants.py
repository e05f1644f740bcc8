"""/api/v1/tenants/, /clusters/, /tiers/ (and a tenant's environment rules)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import mixins, status, viewsets
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request as ApiRequest
from rest_framework.response import Response
from rest_framework.views import APIView

from tenants import selectors, services, tasks
from tenants.api import serializers as s
from tenants.api.permissions import IsPlatformAdmin, IsPlatformAdminOrReadOnly, TokenHasScope
from tenants.api.views.base import DNS_LABEL, ApiView, validated
from tenants.client_address import client_ip
from tenants.models import Cluster, EnvironmentTier, Tenant
from tenants.models.tokens import TokenScope


@extend_schema_view(
    list=extend_schema(summary="Tenants you belong to (platform admins: all)"),
    retrieve=extend_schema(summary="One tenant"),
)
class TenantViewSet(
    ApiView, mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet
):
    serializer_class = s.TenantSerializer
    permission_classes = [IsAuthenticated, IsPlatformAdminOrReadOnly, TokenHasScope]
    scopes = {"create": TokenScope.ADMIN, "partial_update": TokenScope.ADMIN}
    lookup_field = "slug"
    lookup_value_regex = DNS_LABEL
    ordering_fields = ["slug", "name", "created_at"]
    ordering = ["slug"]
    http_method_names = ["get", "post", "patch", "head", "options"]

    queryset = Tenant.objects.none()

    def visible(self, user: Any) -> Any:
        return selectors.tenants_for_user(user).prefetch_related(
            "allowed_clusters", "allowed_tiers"
        )

    def get_serializer_class(self) -> type[s.TenantSerializer]:
        # The budget costs a few queries per tenant: one tenant shows it, the list does not.
        return s.TenantSerializer if self.action == "list" else s.TenantDetailSerializer

    def get_serializer_context(self) -> dict[str, Any]:
        context = super().get_serializer_context()
        if self.request.user.is_authenticated:
            context["roles"] = selectors.role_by_tenant(self.request.user)
        return context

    def _show(
        self, slug: str, status_code: int = status.HTTP_200_OK, *, check: bool = False
    ) -> Response:
        """The tenant; `check`: its repository check queued first (a worker answers it, the
        answer shows in `repository_check`: no request waits for git)."""
        tenant = self.get_queryset().get(slug=slug)
        if check:
            tasks.request_repository_check(tenant)
        return Response(
            s.TenantDetailSerializer(tenant, context=self.get_serializer_context()).data,
            status=status_code,
        )

    @extend_schema(
        summary="Onboard a tenant (platform admins)",
        request=s.TenantCreateSerializer,
        responses={201: s.TenantDetailSerializer},
    )
    def create(self, request: ApiRequest) -> Response:
        data = validated(s.TenantCreateSerializer, request.data)
        tenant = services.onboard_tenant(
            actor=request.user,
            slug=data["slug"],
            name=data["name"],
            groups={role: data.get(f"{role}_groups", []) for role in ("owner", "member", "viewer")},
            repo_url=data.get("gitops_repo_url", ""),
            branch=data.get("gitops_branch", "main"),
            path=data.get("gitops_path", ""),
            credentials=data.get("gitops_credentials", ""),
            known_hosts=data.get("gitops_known_hosts", ""),
            engine=data["gitops_engine"],
            budget_limits={
                "cpu_millis": data["budget_cpu_millis"],
                "memory_mib": data["budget_memory_mib"],
                "storage_gib": data["budget_storage_gib"],
                "namespaces": data["budget_namespaces"],
            },
            clusters=list(data.get("allowed_clusters", [])),
            tiers=list(data.get("allowed_tiers", [])),
            allowed_domains=data.get("allowed_domains", []),
            notify_emails=data.get("notify_emails", []),
            source_ip=client_ip(request),
        )
        return self._show(tenant.slug, status.HTTP_201_CREATED, check=True)

    @extend_schema(
        summary="Change a tenant's groups, budget, GitOps or allowances (platform admins)",
        request=s.TenantSerializer,
        responses=s.TenantDetailSerializer,
    )
    def partial_update(self, request: ApiRequest, slug: str) -> Response:
        tenant = self.get_object()
        form = s.TenantSerializer(tenant, data=request.data, partial=True)
        form.is_valid(raise_exception=True)
        changes = dict(form.validated_data)
        clusters = changes.pop("allowed_clusters", None)
        tiers = changes.pop("allowed_tiers", None)
        confirmed = changes.pop("confirm_removals", False)
        services.update_tenant(
            actor=request.user,
            tenant=tenant,
            changes=changes,
            clusters=list(clusters) if clusters is not None else None,
            tiers=list(tiers) if tiers is not None else None,
            source_ip=client_ip(request),
            confirm_removals=confirmed,
        )
        return self._show(tenant.slug, check=bool(tasks.REPOSITORY_FIELDS & set(changes)))


@extend_schema_view(
    list=extend_schema(summary="Clusters (platform admins)"),
    retrieve=extend_schema(summary="One cluster (platform admins)"),
)
class ClusterViewSet(
    ApiView, mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet
):
    serializer_class = s.ClusterSerializer
    permission_classes = [IsAuthenticated, IsPlatformAdmin, TokenHasScope]
    scopes = {"create": TokenScope.ADMIN, "partial_update": TokenScope.ADMIN}
    queryset = Cluster.objects.all()
    lookup_field = "name"
    lookup_value_regex = DNS_LABEL
    ordering_fields = ["name", "created_at"]
    ordering = ["name"]
    http_method_names = ["get", "post", "patch", "head", "options"]

    def visible(self, user: Any) -> Any:
        # Only platform admins see clusters: for anyone else a cluster's URL names nothing.
        clusters = Cluster.objects.all()
        return clusters if selectors.is_platform_admin(user) else clusters.none()

    @extend_schema(summary="Add a cluster (platform admins)", responses={201: s.ClusterSerializer})
    def create(self, request: ApiRequest) -> Response:
        data = validated(self.get_serializer, request.data)
        cluster = services.save_cluster(
            actor=request.user,
            cluster=None,
            values=dict(data),
            source_ip=client_ip(request),
        )
        return Response(self.get_serializer(cluster).data, status=status.HTTP_201_CREATED)

    @extend_schema(summary="Change a cluster (platform admins)")
    def partial_update(self, request: ApiRequest, name: str) -> Response:
        cluster = self.get_object()
        form = self.get_serializer(cluster, data=request.data, partial=True)
        form.is_valid(raise_exception=True)
        saved = services.save_cluster(
            actor=request.user,
            cluster=cluster,
            values=dict(form.validated_data),
            source_ip=client_ip(request),
        )
        return Response(self.get_serializer(saved).data)


@extend_schema_view(
    list=extend_schema(summary="Environment tiers"),
    retrieve=extend_schema(summary="One environment tier"),
)
class TierViewSet(ApiView, viewsets.ReadOnlyModelViewSet):
    serializer_class = s.TierSerializer
    queryset = EnvironmentTier.objects.prefetch_related("revisions")
    lookup_field = "slug"
    lookup_value_regex = DNS_LABEL
    ordering_fields = ["position", "slug"]
    ordering = ["position", "slug"]


class EnvironmentRulesView(ApiView, APIView):
    """A tenant's environment rules: which namespace each ephemeral environment gets."""

    scopes = {"*": TokenScope.REQUEST}  # writes: owners decide where their environments go

    def get_tenant(self, slug: str) -> Tenant:
        return selectors.visible_tenant(self.request.user, slug)

    def named_object_visible(self, user: Any) -> bool:
        return selectors.tenants_for_user(user).filter(slug=self.kwargs["slug"]).exists()

    def _rules(self, tenant: Tenant) -> Response:
        return Response(
            s.EnvironmentRulesSerializer({"rules": list(tenant.environment_rules.all())}).data
        )

    @extend_schema(
        summary="The tenant's environment rules, in order", responses=s.EnvironmentRulesSerializer
    )
    def get(self, request: ApiRequest, slug: str) -> Response:
        return self._rules(self.get_tenant(slug))

    @extend_schema(
        summary="Replace the tenant's environment rules (owners, platform "
        "admins); all are validated, one bad rule saves none",
        request=s.EnvironmentRulesSerializer,
        responses=s.EnvironmentRulesSerializer,
    )
    def put(self, request: ApiRequest, slug: str) -> Response:
        tenant = self.get_tenant(slug)
        data = validated(s.EnvironmentRulesSerializer, request.data)
        services.replace_environment_rules(
            tenant=tenant,
            rules=[dict(rule) for rule in data["rules"]],
            actor=request.user,
            source_ip=client_ip(request),
        )
        return self._rules(tenant)
