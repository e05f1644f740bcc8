"""/api/v1/environments/: ephemeral environments started by CI (with a dry run), extended,
ended or stopped by name.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    PolymorphicProxySerializer,
    extend_schema,
    extend_schema_view,
)
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound
from rest_framework.request import Request as ApiRequest
from rest_framework.response import Response
from rest_framework.reverse import reverse

from tenants import selectors, services
from tenants.api import serializers as s
from tenants.api.views.base import ID, ApiView, validated
from tenants.api.views.requests import PAYLOAD_FIELDS
from tenants.choices import EndCause, EnvironmentState, RequestKind
from tenants.client_address import client_ip
from tenants.filtersets import EphemeralEnvironmentFilterSet
from tenants.models import EphemeralEnvironment
from tenants.models.tokens import TokenScope


def flag(request: ApiRequest, name: str) -> bool:
    return request.query_params.get(name, "").lower() in ("1", "true", "yes")


@extend_schema_view(
    list=extend_schema(
        summary="Ephemeral environments of your tenants (filter by tenant, "
        "project, env_slug, state)"
    ),
    retrieve=extend_schema(summary="One ephemeral environment"),
)
class EphemeralEnvironmentViewSet(
    ApiView, mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet
):
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

    def _show(
        self, pk: int, status_code: int = status.HTTP_200_OK, headers: dict[str, str] | None = None
    ) -> Response:
        environment = selectors.visible_environment(self.request.user, pk)
        return Response(self.get_serializer(environment).data, status=status_code, headers=headers)

    def _end(self, environment: EphemeralEnvironment, cause: EndCause, reason: str) -> Response:
        """End it (whoever asked, for whatever cause): 202, its removal follows."""
        services.end_environment(
            environment_id=environment.pk,
            actor=self.request.user,
            cause=cause,
            reason=reason,
            source_ip=client_ip(self.request),
        )
        return self._show(environment.pk, status.HTTP_202_ACCEPTED)

    @extend_schema(
        summary="Create an ephemeral environment (CI: on deploy). The response names its "
        "namespace; provisioning follows. ?reuse=true answers the project's live environment "
        "of this env_slug (200) if there is one, restarting its TTL: what every push asks. "
        "?dry_run=true only says what it would be.",
        request=s.EphemeralEnvironmentCreateSerializer,
        parameters=[
            OpenApiParameter(
                "dry_run", bool, description="Validate and name the namespace, create nothing."
            ),
            OpenApiParameter(
                "reuse",
                bool,
                description="Answer the live environment of this project and env_slug, if any "
                "(same branch and mr_id), instead of refusing a second one.",
            ),
        ],
        responses={
            201: s.EphemeralEnvironmentSerializer,
            200: OpenApiResponse(
                PolymorphicProxySerializer(
                    "EphemeralEnvironmentFoundOrPreview",
                    [s.EphemeralEnvironmentSerializer, s.EphemeralEnvironmentPreviewSerializer],
                    resource_type_field_name=None,
                ),
                description="reuse: the environment found; dry_run: what it would be.",
            ),
        },
    )
    def create(self, request: ApiRequest) -> Response:
        data = validated(s.EphemeralEnvironmentCreateSerializer, request.data)
        tenant = selectors.visible_tenant(request.user, data["tenant"])
        payload = {k: v for k, v in data.items() if k in PAYLOAD_FIELDS}
        if flag(request, "dry_run"):
            cleaned = services.ephemeral_preview(request.user, tenant, payload)
            return Response(
                s.EphemeralEnvironmentPreviewSerializer(
                    {
                        **cleaned,
                        "rule": cleaned["rule_position"],
                        "shares_namespace": cleaned["shared"],
                    }
                ).data
            )
        if flag(request, "reuse"):
            environment, created = services.ensure_environment(
                tenant=tenant, payload=payload, requester=request.user, source_ip=client_ip(request)
            )
            if not created:
                return self._show(environment.pk)
        else:
            created = services.submit_request(
                tenant=tenant,
                kind=RequestKind.EPHEMERAL,
                payload=payload,
                requester=request.user,
                source_ip=client_ip(request),
            )
            environment = EphemeralEnvironment.objects.get(request=created)
        location = reverse("api:environment-detail", kwargs={"pk": environment.pk})
        return self._show(environment.pk, status.HTTP_201_CREATED, {"Location": location})

    @extend_schema(
        summary="Let it live this long from now (its creator, tenant owners, "
        "platform admins), never past its maximum",
        request=s.EnvironmentExtendSerializer,
        responses=s.EphemeralEnvironmentSerializer,
    )
    @action(detail=True, methods=["post"])
    def extend(self, request: ApiRequest, pk: str) -> Response:
        environment = self.get_object()
        data = validated(s.EnvironmentExtendSerializer, request.data)
        services.extend_environment(
            environment_id=environment.pk,
            actor=request.user,
            ttl_seconds=data["ttl"],
            source_ip=client_ip(request),
        )
        return self._show(environment.pk)

    @extend_schema(
        summary="End it now: namespace deleted (if its own) and GitOps files removed",
        request=s.EnvironmentEndSerializer,
        responses={202: s.EphemeralEnvironmentSerializer},
    )
    @action(detail=True, methods=["post"])
    def end(self, request: ApiRequest, pk: str) -> Response:
        environment = self.get_object()
        data = validated(s.EnvironmentEndSerializer, request.data)
        return self._end(environment, EndCause.ENDED_BY_USER, data["reason"])

    @extend_schema(
        summary="CI: the environment stopped (on_stop). Ends it by its variables; "
        "stopping one already ending or ended changes nothing.",
        request=s.EnvironmentStopSerializer,
        responses={202: s.EphemeralEnvironmentSerializer, 200: s.EphemeralEnvironmentSerializer},
    )
    @action(detail=False, methods=["post"])
    def stop(self, request: ApiRequest) -> Response:
        data = validated(s.EnvironmentStopSerializer, request.data)
        tenant = selectors.visible_tenant(request.user, data["tenant"])
        environment = (
            selectors.environments_visible_to(request.user)
            .filter(tenant=tenant, project__name=data["project"], slug=data["env_slug"])
            .order_by("-pk")
            .first()
        )
        if environment is None:
            raise NotFound(
                f"{tenant.slug} has no environment {data['env_slug']} of project "
                f"{data['project']!r}."
            )
        if environment.state in (EnvironmentState.ENDING, EnvironmentState.ENDED):
            return self._show(environment.pk)
        return self._end(environment, EndCause.STOPPED, data["reason"])
