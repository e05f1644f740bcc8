"""/api/v1/audit-events/ (platform admins: all; tenant owners: their tenants)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import viewsets
from rest_framework.permissions import IsAuthenticated

from tenants import selectors
from tenants.api import serializers as s
from tenants.api.pagination import AuditCursorPagination
from tenants.api.permissions import MaySeeAudit, TokenHasScope
from tenants.api.views.base import ID, ApiView
from tenants.filtersets import AuditEventFilterSet
from tenants.models import AuditEvent


@extend_schema_view(
    list=extend_schema(summary="Audit events (platform admins; tenant owners: their tenants)"),
    retrieve=extend_schema(summary="One audit event"),
)
class AuditEventViewSet(ApiView, viewsets.ReadOnlyModelViewSet):
    serializer_class = s.AuditEventSerializer
    permission_classes = [IsAuthenticated, MaySeeAudit, TokenHasScope]
    filterset_class = AuditEventFilterSet
    pagination_class = AuditCursorPagination
    # The pages are cut by time, so time is the only order: `created_at` or `-created_at`.
    ordering_fields = ["created_at"]
    ordering = ["-created_at"]
    lookup_value_regex = ID

    queryset = AuditEvent.objects.none()

    def visible(self, user: Any) -> Any:
        return selectors.audit_events_visible_to(user)
