"""API views: parse input, call one service or selector, serialize.

Every queryset comes from a tenants.selectors function scoped to the caller, so anything
outside their tenants is 404, exactly as in the browser; every change goes through
tenants.services, so validation, approval policy and audit are the web's own.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import generics, mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request as ApiRequest
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.views import APIView

from tenants import engine, selectors, services
from tenants.api import serializers as s
from tenants.api.authentication import AccessToken
from tenants.api.exceptions import Conflict
from tenants.api.idempotency import IdempotentMixin
from tenants.api.permissions import (
    IsPlatformAdmin,
    IsPlatformAdminOrReadOnly,
    MaySeeAudit,
    TokenHasScope,
)
from tenants.choices import EndCause, EnvironmentState, RequestKind, RequestState
from tenants.errors import PlanUnavailable
from tenants.filtersets import (
    AuditEventFilterSet,
    EphemeralEnvironmentFilterSet,
    NamespaceFilterSet,
    ProjectFilterSet,
    RequestFilterSet,
)
from tenants.models import (
    ApiToken,
    AuditEvent,
    Cluster,
    EnvironmentTier,
    EphemeralEnvironment,
    Namespace,
    Project,
    Request,
    Run,
    Tenant,
)
from tenants.models.tokens import TokenScope

# Database ids in URLs: digits only, and never more than a bigint holds.
ID = r"[0-9]{1,18}"


def client_ip(request: ApiRequest) -> str | None:
    return request.META.get("REMOTE_ADDR")


class ApiView(IdempotentMixin):
    # What every API view shares: authenticated, token scopes, Idempotency-Key on POST.

    permission_classes = [IsAuthenticated, TokenHasScope]
    scopes: dict[str, str] = {}
    # The model, for the schema; the rows always come from `visible` (a selector).
    queryset: Any = None

    def get_queryset(self) -> Any:
        if getattr(self, "swagger_fake_view", False):  # schema generation: nobody, no URL
            return self.queryset
        return self.visible(self.request.user)

    def visible(self, user: Any) -> Any:
        return self.queryset.all()  # a fresh queryset per request, never the class's


# --- tenants, clusters, tiers --------------------------------------------------------------


@extend_schema_view(
    list=extend_schema(summary="Tenants you belong to (platform admins: all)"),
    retrieve=extend_schema(summary="One tenant"),
)
class TenantViewSet(ApiView, mixins.ListModelMixin, mixins.RetrieveModelMixin,
                    viewsets.GenericViewSet):
    serializer_class = s.TenantSerializer
    permission_classes = [IsAuthenticated, IsPlatformAdminOrReadOnly, TokenHasScope]
    scopes = {"create": TokenScope.ADMIN, "partial_update": TokenScope.ADMIN}
    lookup_field = "slug"
    lookup_value_regex = r"[a-z0-9-]{1,63}"
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

    def _show(self, slug: str, status_code: int = status.HTTP_200_OK) -> Response:
        tenant = self.get_queryset().get(slug=slug)
        return Response(self.get_serializer(tenant).data, status=status_code)

    @extend_schema(summary="Onboard a tenant (platform admins)",
                   request=s.TenantCreateSerializer, responses={201: s.TenantDetailSerializer})
    def create(self, request: ApiRequest) -> Response:
        form = s.TenantCreateSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        tenant = services.onboard_tenant(
            actor=request.user,
            slug=data["slug"],
            name=data["name"],
            groups={role: data.get(f"{role}_groups", []) for role in ("owner", "member",
                                                                     "viewer")},
            repo_url=data.get("gitops_repo_url", ""),
            branch=data.get("gitops_branch", "main"),
            path=data.get("gitops_path", ""),
            credentials=data.get("gitops_credentials", ""),
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
        return self._show(tenant.slug, status.HTTP_201_CREATED)

    @extend_schema(summary="Change a tenant's groups, budget, GitOps or allowances "
                           "(platform admins)",
                   request=s.TenantSerializer, responses=s.TenantDetailSerializer)
    def partial_update(self, request: ApiRequest, slug: str) -> Response:
        tenant = self.get_object()
        form = s.TenantSerializer(tenant, data=request.data, partial=True)
        form.is_valid(raise_exception=True)
        changes = dict(form.validated_data)
        clusters = changes.pop("allowed_clusters", None)
        tiers = changes.pop("allowed_tiers", None)
        services.update_tenant(
            actor=request.user, tenant=tenant, changes=changes,
            clusters=list(clusters) if clusters is not None else None,
            tiers=list(tiers) if tiers is not None else None,
            source_ip=client_ip(request),
        )
        return self._show(tenant.slug)


@extend_schema_view(
    list=extend_schema(summary="Clusters (platform admins)"),
    retrieve=extend_schema(summary="One cluster (platform admins)"),
)
class ClusterViewSet(ApiView, mixins.ListModelMixin, mixins.RetrieveModelMixin,
                     viewsets.GenericViewSet):
    serializer_class = s.ClusterSerializer
    permission_classes = [IsAuthenticated, IsPlatformAdmin, TokenHasScope]
    scopes = {"create": TokenScope.ADMIN, "partial_update": TokenScope.ADMIN}
    queryset = Cluster.objects.all()
    lookup_field = "name"
    lookup_value_regex = r"[a-z0-9-]{1,63}"
    ordering_fields = ["name", "created_at"]
    ordering = ["name"]
    http_method_names = ["get", "post", "patch", "head", "options"]

    @extend_schema(summary="Add a cluster (platform admins)", responses={201: s.ClusterSerializer})
    def create(self, request: ApiRequest) -> Response:
        form = self.get_serializer(data=request.data)
        form.is_valid(raise_exception=True)
        cluster = services.save_cluster(actor=request.user, cluster=None,
                                        values=dict(form.validated_data),
                                        source_ip=client_ip(request))
        return Response(self.get_serializer(cluster).data, status=status.HTTP_201_CREATED)

    @extend_schema(summary="Change a cluster (platform admins)")
    def partial_update(self, request: ApiRequest, name: str) -> Response:
        cluster = self.get_object()
        form = self.get_serializer(cluster, data=request.data, partial=True)
        form.is_valid(raise_exception=True)
        saved = services.save_cluster(actor=request.user, cluster=cluster,
                                      values=dict(form.validated_data),
                                      source_ip=client_ip(request))
        return Response(self.get_serializer(saved).data)


@extend_schema_view(
    list=extend_schema(summary="Environment tiers"),
    retrieve=extend_schema(summary="One environment tier"),
)
class TierViewSet(ApiView, viewsets.ReadOnlyModelViewSet):
    serializer_class = s.TierSerializer
    queryset = EnvironmentTier.objects.all()
    lookup_field = "slug"
    lookup_value_regex = r"[a-z0-9-]{1,63}"
    ordering_fields = ["position", "slug"]
    ordering = ["position", "slug"]


# --- requests ------------------------------------------------------------------------------


def _plan(tenancy_request: Request) -> tuple[dict[str, Any] | None, str]:
    if tenancy_request.state not in engine.PLANNED_STATES:
        return None, ""
    try:
        plan = engine.plan(tenancy_request)
    except PlanUnavailable as exc:
        return None, str(exc)
    return {
        "digest": plan.digest,
        "objects": list(plan.apply),
        "deletes": [
            {"apiVersion": ref.api_version, "kind": ref.kind, "name": ref.name,
             "namespace": ref.namespace}
            for ref in plan.delete
        ],
        "yaml": plan.to_yaml(),
    }, ""


def request_detail(tenancy_request: Request, user: Any) -> dict[str, Any]:
    """The request as its page shows it: plan, approvals, comments, history, what you may do."""
    plan, plan_error = _plan(tenancy_request)
    submitted = tenancy_request.state == RequestState.SUBMITTED
    body = dict(s.RequestSerializer(tenancy_request).data)
    body.update(
        plan=s.PlanSerializer(plan).data if plan else None,
        plan_error=plan_error,
        approvals=s.ApprovalSerializer(
            tenancy_request.approvals.select_related("approver"), many=True
        ).data,
        comments=s.CommentSerializer(
            tenancy_request.comments.select_related("author"), many=True
        ).data,
        history=s.HistoryEventSerializer(selectors.request_history(tenancy_request),
                                         many=True).data,
        permissions={
            "may_decide": submitted
            and selectors.why_cannot_decide(user, tenancy_request) is None,
            "may_cancel": submitted and (tenancy_request.requester_id == user.pk
                                         or selectors.is_platform_admin(user)),
            "may_retry": tenancy_request.state == RequestState.FAILED
            and selectors.is_platform_admin(user),
        },
    )
    return body


@extend_schema_view(
    list=extend_schema(summary="Requests of your tenants (the dashboard's filters)"),
)
class RequestViewSet(ApiView, mixins.ListModelMixin, viewsets.GenericViewSet):
    serializer_class = s.RequestSerializer
    filterset_class = RequestFilterSet
    ordering_fields = ["created_at", "updated_at", "id", "state", "kind"]
    ordering = ["-created_at", "-id"]
    lookup_value_regex = ID
    scopes = {
        "create": TokenScope.REQUEST,
        "cancel": TokenScope.REQUEST,
        "comment": TokenScope.REQUEST,
        "approve": TokenScope.APPROVE,
        "reject": TokenScope.APPROVE,
        "retry": TokenScope.APPROVE,
    }

    queryset = Request.objects.none()

    def visible(self, user: Any) -> Any:
        return selectors.requests_visible_to(user)

    def get_object(self) -> Request:
        return selectors.visible_request(self.request.user, int(self.kwargs["pk"]))

    def _detail(self, pk: int, status_code: int = status.HTTP_200_OK,
                headers: dict[str, str] | None = None) -> Response:
        tenancy_request = selectors.visible_request(self.request.user, pk)
        return Response(request_detail(tenancy_request, self.request.user),
                        status=status_code, headers=headers)

    @extend_schema(summary="One request, with its plan, approvals, comments and history",
                   responses=s.RequestDetailSerializer)
    def retrieve(self, request: ApiRequest, pk: str) -> Response:
        return self._detail(self.get_object().pk)

    @extend_schema(
        summary="Ask for something: a namespace, project, environment, quota change or "
                "decommission",
        request=s.RequestCreateSerializer,
        responses={201: s.RequestDetailSerializer},
    )
    def create(self, request: ApiRequest) -> Response:
        form = s.RequestCreateSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        tenant = selectors.visible_tenant(request.user, form.validated_data["tenant"])
        try:
            created = services.submit_request(
                tenant=tenant,
                kind=form.validated_data["kind"],
                payload=form.validated_data["payload"],
                requester=request.user,
                source_ip=client_ip(request),
            )
        except ValidationError as exc:
            raise ValidationError({"payload": exc.detail}) from exc
        location = reverse("api:request-detail", kwargs={"pk": created.pk})
        return self._detail(created.pk, status.HTTP_201_CREATED, {"Location": location})

    @extend_schema(summary="Cancel a request awaiting approval (its requester or a platform "
                           "admin)", request=None, responses=s.RequestDetailSerializer)
    @action(detail=True, methods=["post"])
    def cancel(self, request: ApiRequest, pk: str) -> Response:
        tenancy_request = self.get_object()
        services.cancel_request(request_id=tenancy_request.pk, actor=request.user,
                                source_ip=client_ip(request))
        return self._detail(tenancy_request.pk)

    @extend_schema(summary="Approve the plan with this digest", request=s.ApproveSerializer,
                   responses=s.RequestDetailSerializer)
    @action(detail=True, methods=["post"])
    def approve(self, request: ApiRequest, pk: str) -> Response:
        tenancy_request = self.get_object()
        form = s.ApproveSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        digest = form.validated_data["plan_digest"]
        if tenancy_request.state == RequestState.SUBMITTED:
            plan, plan_error = _plan(tenancy_request)
            if plan is None:
                raise Conflict(plan_error, problem="plan-changed")
            if plan["digest"] != digest:
                raise Conflict(
                    "The plan changed since you read it: approve the current plan.",
                    problem="plan-changed", current_plan_digest=plan["digest"],
                )
        services.approve_request(request_id=tenancy_request.pk, approver=request.user,
                                 plan_digest=digest, reason=form.validated_data["note"],
                                 source_ip=client_ip(request))
        return self._detail(tenancy_request.pk)

    @extend_schema(summary="Reject a request, with a reason", request=s.RejectSerializer,
                   responses=s.RequestDetailSerializer)
    @action(detail=True, methods=["post"])
    def reject(self, request: ApiRequest, pk: str) -> Response:
        tenancy_request = self.get_object()
        form = s.RejectSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        services.reject_request(request_id=tenancy_request.pk, approver=request.user,
                                reason=form.validated_data["reason"],
                                source_ip=client_ip(request))
        return self._detail(tenancy_request.pk)

    @extend_schema(summary="Comment on a request", request=s.CommentCreateSerializer,
                   responses={201: s.CommentSerializer})
    @action(detail=True, methods=["post"])
    def comment(self, request: ApiRequest, pk: str) -> Response:
        tenancy_request = self.get_object()
        form = s.CommentCreateSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        comment = services.add_comment(request_id=tenancy_request.pk, author=request.user,
                                       body=form.validated_data["body"],
                                       source_ip=client_ip(request))
        return Response(s.CommentSerializer(comment).data, status=status.HTTP_201_CREATED)

    @extend_schema(summary="Provision a failed request again (platform admins)",
                   request=None, responses=s.RequestDetailSerializer)
    @action(detail=True, methods=["post"])
    def retry(self, request: ApiRequest, pk: str) -> Response:
        tenancy_request = self.get_object()
        plan, plan_error = _plan(tenancy_request)
        if plan is None and plan_error:
            raise Conflict(plan_error)
        services.retry_request(request_id=tenancy_request.pk, actor=request.user,
                               plan_digest=plan["digest"] if plan else "",
                               source_ip=client_ip(request))
        return self._detail(tenancy_request.pk)


@extend_schema(summary="Provisioning runs of a request: steps, attempts, error")
class RequestRunsView(ApiView, generics.ListAPIView):
    serializer_class = s.RunSerializer
    ordering_fields = ["started_at", "id"]
    ordering = ["-started_at", "-id"]

    queryset = Run.objects.none()

    def visible(self, user: Any) -> Any:
        return selectors.visible_request(user, int(self.kwargs["pk"])).runs.all()


# --- namespaces, projects, environments, audit ----------------------------------------------


@extend_schema_view(
    list=extend_schema(summary="Namespaces of your tenants: state, quota, drift"),
    retrieve=extend_schema(summary="One namespace"),
)
class NamespaceViewSet(ApiView, viewsets.ReadOnlyModelViewSet):
    serializer_class = s.NamespaceSerializer
    filterset_class = NamespaceFilterSet
    ordering_fields = ["name", "created_at", "state"]
    ordering = ["name", "id"]
    lookup_value_regex = ID

    queryset = Namespace.objects.none()

    def visible(self, user: Any) -> Any:
        return selectors.namespaces_visible_to(user)

    def get_object(self) -> Any:
        return selectors.visible_namespace(self.request.user, int(self.kwargs["pk"]))


@extend_schema_view(
    list=extend_schema(summary="Application projects of your tenants"),
    retrieve=extend_schema(summary="One project"),
)
class ProjectViewSet(ApiView, viewsets.ReadOnlyModelViewSet):
    serializer_class = s.ProjectSerializer
    filterset_class = ProjectFilterSet
    ordering_fields = ["name", "created_at"]
    ordering = ["tenant__slug", "name"]
    lookup_value_regex = ID

    queryset = Project.objects.none()

    def visible(self, user: Any) -> Any:
        return selectors.projects_visible_to(user)

    def get_object(self) -> Any:
        return selectors.visible_project(self.request.user, int(self.kwargs["pk"]))


@extend_schema(summary="Environments of a project: its namespaces, one per tier")
class ProjectEnvironmentsView(ApiView, generics.ListAPIView):
    serializer_class = s.NamespaceSerializer
    ordering_fields = ["name", "created_at", "state"]
    ordering = ["tier__position", "name"]

    queryset = Namespace.objects.none()

    def visible(self, user: Any) -> Any:
        project = selectors.visible_project(user, int(self.kwargs["pk"]))
        return selectors.namespaces_visible_to(user).filter(project=project)


@extend_schema_view(
    list=extend_schema(summary="Audit events (platform admins; tenant owners: their tenants)"),
    retrieve=extend_schema(summary="One audit event"),
)
class AuditEventViewSet(ApiView, viewsets.ReadOnlyModelViewSet):
    serializer_class = s.AuditEventSerializer
    permission_classes = [IsAuthenticated, MaySeeAudit, TokenHasScope]
    filterset_class = AuditEventFilterSet
    ordering_fields = ["created_at", "id"]
    ordering = ["-created_at", "-id"]
    lookup_value_regex = ID

    queryset = AuditEvent.objects.none()

    def visible(self, user: Any) -> Any:
        return selectors.audit_events_visible_to(user)


class MeView(ApiView, APIView):
    @extend_schema(summary="Who the credential acts as, and what it may do",
                   responses=s.MeSerializer)
    def get(self, request: ApiRequest) -> Response:
        user, auth = request.user, request.auth
        if isinstance(auth, ApiToken):
            kind, scopes, token = "api_token", list(auth.scopes), s.token_summary(auth)
        else:
            kind = "oidc_access_token" if isinstance(auth, AccessToken) else "session"
            scopes, token = list(TokenScope.values), None
        memberships = [
            {"tenant": slug, "role": role}
            for slug, role in user.memberships.values_list("tenant__slug", "role")
        ]
        return Response(s.MeSerializer({
            "username": user.username,
            "display_name": user.display_name,
            "is_platform_admin": selectors.is_platform_admin(user),
            "memberships": memberships,
            "authentication": kind,
            "scopes": scopes,
            "token": token,
        }).data)




# --- ephemeral environments ------------------------------------------------------------------

PAYLOAD_FIELDS = ("project", "env_slug", "branch", "mr_id", "cluster", "tier", "ttl", "cpu",
                  "memory", "storage")


@extend_schema_view(
    list=extend_schema(summary="Ephemeral environments of your tenants (filter by tenant, "
                               "project, env_slug, state)"),
    retrieve=extend_schema(summary="One ephemeral environment"),
)
class EphemeralEnvironmentViewSet(ApiView, mixins.ListModelMixin, mixins.RetrieveModelMixin,
                                  viewsets.GenericViewSet):
    serializer_class = s.EphemeralEnvironmentSerializer
    filterset_class = EphemeralEnvironmentFilterSet
    ordering_fields = ["expires_at", "created_at", "id"]
    ordering = ["-created_at", "-id"]
    lookup_value_regex = ID
    scopes = {
        "create": TokenScope.REQUEST,
        "extend": TokenScope.REQUEST,
        "end": TokenScope.REQUEST,
        "stop": TokenScope.REQUEST,
    }

    queryset = EphemeralEnvironment.objects.none()

    def visible(self, user: Any) -> Any:
        return selectors.environments_visible_to(user)

    def get_object(self) -> EphemeralEnvironment:
        return selectors.visible_environment(self.request.user, int(self.kwargs["pk"]))

    def _show(self, pk: int, status_code: int = status.HTTP_200_OK,
              headers: dict[str, str] | None = None) -> Response:
        environment = selectors.visible_environment(self.request.user, pk)
        return Response(self.get_serializer(environment).data, status=status_code,
                        headers=headers)

    @extend_schema(
        summary="Create an ephemeral environment (CI: on deploy). The response names its "
                "namespace; provisioning follows. ?dry_run=true only says what it would be.",
        request=s.EphemeralEnvironmentCreateSerializer,
        parameters=[OpenApiParameter("dry_run", bool, description="Validate and name the "
                                     "namespace, create nothing.")],
        responses={201: s.EphemeralEnvironmentSerializer,
                   200: s.EphemeralEnvironmentPreviewSerializer},
    )
    def create(self, request: ApiRequest) -> Response:
        form = s.EphemeralEnvironmentCreateSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        tenant = selectors.visible_tenant(request.user, form.validated_data["tenant"])
        payload = {k: v for k, v in form.validated_data.items() if k in PAYLOAD_FIELDS}
        if request.query_params.get("dry_run", "").lower() in ("1", "true", "yes"):
            cleaned = selectors.ephemeral_preview(request.user, tenant, payload)
            return Response(s.EphemeralEnvironmentPreviewSerializer({
                **cleaned,
                "rule": cleaned["rule_position"],
                "shares_namespace": cleaned["shared"],
            }).data)
        created = services.submit_request(
            tenant=tenant, kind=RequestKind.EPHEMERAL, payload=payload,
            requester=request.user, source_ip=client_ip(request),
        )
        environment = EphemeralEnvironment.objects.get(request=created)
        location = reverse("api:environment-detail", kwargs={"pk": environment.pk})
        return self._show(environment.pk, status.HTTP_201_CREATED, {"Location": location})

    @extend_schema(summary="Let it live this long from now (its creator, tenant owners, "
                           "platform admins), never past its maximum",
                   request=s.EnvironmentExtendSerializer,
                   responses=s.EphemeralEnvironmentSerializer)
    @action(detail=True, methods=["post"])
    def extend(self, request: ApiRequest, pk: str) -> Response:
        environment = self.get_object()
        form = s.EnvironmentExtendSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        services.extend_environment(environment_id=environment.pk, actor=request.user,
                                    ttl_seconds=form.validated_data["ttl"],
                                    source_ip=client_ip(request))
        return self._show(environment.pk)

    @extend_schema(summary="End it now: namespace deleted (if its own) and GitOps files "
                           "removed", request=s.EnvironmentEndSerializer,
                   responses={202: s.EphemeralEnvironmentSerializer})
    @action(detail=True, methods=["post"])
    def end(self, request: ApiRequest, pk: str) -> Response:
        environment = self.get_object()
        form = s.EnvironmentEndSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        services.end_environment(environment_id=environment.pk, actor=request.user,
                                 cause=EndCause.ENDED_BY_USER,
                                 reason=form.validated_data["reason"],
                                 source_ip=client_ip(request))
        return self._show(environment.pk, status.HTTP_202_ACCEPTED)

    @extend_schema(
        summary="CI: the environment stopped (on_stop). Ends it by its variables; "
                "stopping one already ending or ended changes nothing.",
        request=s.EnvironmentStopSerializer,
        responses={202: s.EphemeralEnvironmentSerializer,
                   200: s.EphemeralEnvironmentSerializer},
    )
    @action(detail=False, methods=["post"])
    def stop(self, request: ApiRequest) -> Response:
        form = s.EnvironmentStopSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        tenant = selectors.visible_tenant(request.user, data["tenant"])
        environment = (
            selectors.environments_visible_to(request.user)
            .filter(tenant=tenant, project__name=data["project"], slug=data["env_slug"])
            .order_by("-pk")
            .first()
        )
        if environment is None:
            raise NotFound(f"{tenant.slug} has no environment {data['env_slug']} of project "
                           f"{data['project']!r}.")
        if environment.state in (EnvironmentState.ENDING, EnvironmentState.ENDED):
            return self._show(environment.pk)
        services.end_environment(environment_id=environment.pk, actor=request.user,
                                 cause=EndCause.STOPPED, reason=data["reason"],
                                 source_ip=client_ip(request))
        return self._show(environment.pk, status.HTTP_202_ACCEPTED)


class EnvironmentRulesView(ApiView, APIView):
    """A tenant's environment rules: which namespace each ephemeral environment gets."""

    scopes = {"*": TokenScope.REQUEST}  # writes: owners decide where their environments go

    def get_tenant(self, slug: str) -> Tenant:
        return selectors.visible_tenant(self.request.user, slug)

    def _rules(self, tenant: Tenant) -> Response:
        return Response(s.EnvironmentRulesSerializer(
            {"rules": list(tenant.environment_rules.all())}
        ).data)

    @extend_schema(summary="The tenant's environment rules, in order",
                   responses=s.EnvironmentRulesSerializer)
    def get(self, request: ApiRequest, slug: str) -> Response:
        return self._rules(self.get_tenant(slug))

    @extend_schema(summary="Replace the tenant's environment rules (owners, platform "
                           "admins); all are validated, one bad rule saves none",
                   request=s.EnvironmentRulesSerializer, responses=s.EnvironmentRulesSerializer)
    def put(self, request: ApiRequest, slug: str) -> Response:
        tenant = self.get_tenant(slug)
        form = s.EnvironmentRulesSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        services.replace_environment_rules(
            tenant=tenant, rules=[dict(rule) for rule in form.validated_data["rules"]],
            actor=request.user, source_ip=client_ip(request),
        )
        return self._rules(tenant)
