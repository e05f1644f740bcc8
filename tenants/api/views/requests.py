"""/api/v1/requests/: ask, read (with the plan), decide, retry; and a request's runs."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import generics, mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request as ApiRequest
from rest_framework.response import Response
from rest_framework.reverse import reverse

from tenants import selectors, services
from tenants.api import serializers as s
from tenants.api.exceptions import Conflict
from tenants.api.views.base import ID, ApiView, validated
from tenants.client_address import client_ip
from tenants.errors import InvalidInput
from tenants.filtersets import RequestFilterSet
from tenants.models import Request, Run
from tenants.models.tokens import TokenScope


def _plan(tenancy_request: Request) -> tuple[dict[str, Any] | None, str]:
    review = selectors.review(tenancy_request)
    if review.plan is None:
        return None, review.plan_error
    plan = review.plan
    return {
        "digest": review.digest,
        "objects_digest": plan.digest,
        "objects": list(plan.redacted()),
        "deletes": [
            {
                "apiVersion": ref.api_version,
                "kind": ref.kind,
                "name": ref.name,
                "namespace": ref.namespace,
            }
            for ref in plan.delete
        ],
        "yaml": plan.to_yaml(),
        "gitops_diff": review.gitops_diff,
        "gitops_error": review.gitops_error,
    }, ""


def request_detail(tenancy_request: Request, user: Any) -> dict[str, Any]:
    """The request as its page shows it: plan, approvals, comments, history, what you may do."""
    plan, plan_error = _plan(tenancy_request)
    # What the request's page offers, for the plan returned here.
    actions = selectors.request_actions(
        user, tenancy_request, plan_digest=plan["digest"] if plan else None
    )
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
        history=s.HistoryEventSerializer(
            selectors.request_history(tenancy_request), many=True
        ).data,
        permissions=actions.permissions,
    )
    pull = getattr(tenancy_request, "pull_request", None)
    body["pull_request"] = s.PullRequestSerializer(pull).data if pull else None
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
        if self.action == "list":
            return selectors.request_rows_visible_to(user)
        return selectors.requests_visible_to(user)

    def get_object(self) -> Request:
        return selectors.visible_request(self.request.user, int(self.kwargs["pk"]))

    def _detail(
        self, pk: int, status_code: int = status.HTTP_200_OK, headers: dict[str, str] | None = None
    ) -> Response:
        tenancy_request = selectors.visible_request(self.request.user, pk)
        return Response(
            request_detail(tenancy_request, self.request.user), status=status_code, headers=headers
        )

    @extend_schema(
        summary="One request, with its plan, approvals, comments and history",
        responses=s.RequestDetailSerializer,
    )
    def retrieve(self, request: ApiRequest, pk: str) -> Response:
        return self._detail(self.get_object().pk)

    @extend_schema(
        summary="Ask for something: a namespace, project, environment, quota change, "
        "decommission or sleep schedule",
        request=s.RequestCreateSerializer,
        responses={201: s.RequestDetailSerializer},
    )
    def create(self, request: ApiRequest) -> Response:
        data = validated(s.RequestCreateSerializer, request.data)
        tenant = selectors.visible_tenant(request.user, data["tenant"])
        try:
            created = services.submit_request(
                tenant=tenant,
                kind=data["kind"],
                payload=data["payload"],
                requester=request.user,
                source_ip=client_ip(request),
            )
        except InvalidInput as exc:
            raise exc.under("payload") from exc
        location = reverse("api:request-detail", kwargs={"pk": created.pk})
        return self._detail(created.pk, status.HTTP_201_CREATED, {"Location": location})

    @extend_schema(
        summary="Cancel a request awaiting approval (its requester or a platform admin)",
        request=None,
        responses=s.RequestDetailSerializer,
    )
    @action(detail=True, methods=["post"])
    def cancel(self, request: ApiRequest, pk: str) -> Response:
        tenancy_request = self.get_object()
        services.cancel_request(
            request_id=tenancy_request.pk, actor=request.user, source_ip=client_ip(request)
        )
        return self._detail(tenancy_request.pk)

    @extend_schema(
        summary="Approve the plan with this digest",
        request=s.ApproveSerializer,
        responses=s.RequestDetailSerializer,
    )
    @action(detail=True, methods=["post"])
    def approve(self, request: ApiRequest, pk: str) -> Response:
        tenancy_request = self.get_object()
        data = validated(s.ApproveSerializer, request.data)
        services.approve_request(
            request_id=tenancy_request.pk,
            approver=request.user,
            plan_digest=data["plan_digest"],
            reason=data["note"],
            source_ip=client_ip(request),
        )
        return self._detail(tenancy_request.pk)

    @extend_schema(
        summary="Reject a request, with a reason",
        request=s.RejectSerializer,
        responses=s.RequestDetailSerializer,
    )
    @action(detail=True, methods=["post"])
    def reject(self, request: ApiRequest, pk: str) -> Response:
        tenancy_request = self.get_object()
        data = validated(s.RejectSerializer, request.data)
        services.reject_request(
            request_id=tenancy_request.pk,
            approver=request.user,
            reason=data["reason"],
            source_ip=client_ip(request),
        )
        return self._detail(tenancy_request.pk)

    @extend_schema(
        summary="Comment on a request",
        request=s.CommentCreateSerializer,
        responses={201: s.CommentSerializer},
    )
    @action(detail=True, methods=["post"])
    def comment(self, request: ApiRequest, pk: str) -> Response:
        tenancy_request = self.get_object()
        data = validated(s.CommentCreateSerializer, request.data)
        comment = services.add_comment(
            request_id=tenancy_request.pk,
            author=request.user,
            body=data["body"],
            source_ip=client_ip(request),
        )
        return Response(s.CommentSerializer(comment).data, status=status.HTTP_201_CREATED)

    @extend_schema(
        summary="Provision a failed request again (platform admins)",
        request=None,
        responses=s.RequestDetailSerializer,
    )
    @action(detail=True, methods=["post"])
    def retry(self, request: ApiRequest, pk: str) -> Response:
        tenancy_request = self.get_object()
        plan, plan_error = _plan(tenancy_request)
        if plan is None and plan_error:
            raise Conflict(plan_error)
        services.retry_request(
            request_id=tenancy_request.pk,
            actor=request.user,
            plan_digest=plan["digest"] if plan else "",
            source_ip=client_ip(request),
        )
        return self._detail(tenancy_request.pk)


@extend_schema(summary="Provisioning runs of a request: steps, attempts, error")
class RequestRunsView(ApiView, generics.ListAPIView):
    serializer_class = s.RunSerializer
    ordering_fields = ["started_at", "id"]
    ordering = ["-started_at", "-id"]

    queryset = Run.objects.none()

    def visible(self, user: Any) -> Any:
        return selectors.visible_request(user, int(self.kwargs["pk"])).runs.all()

    def named_object_visible(self, user: Any) -> bool:
        return selectors.requests_visible_to(user).filter(pk=self.kwargs["pk"]).exists()


PAYLOAD_FIELDS = (
    "project",
    "env_slug",
    "branch",
    "mr_id",
    "cluster",
    "tier",
    "ttl",
    "cpu",
    "memory",
    "storage",
)
