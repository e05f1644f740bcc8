"""Filters shared by the dashboard tables and the REST API list endpoints."""

from __future__ import annotations

from datetime import date, datetime, time, timedelta

import django_filters
from django.db.models import Q, QuerySet
from django.db.models.fields.json import KT
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field

from tenants.choices import (
    EnvironmentState,
    GitOpsEngine,
    NamePurpose,
    NamespaceState,
    RequestKind,
    RequestState,
)
from tenants.models import (
    AuditEvent,
    Cluster,
    EnvironmentTier,
    EphemeralEnvironment,
    Namespace,
    NamespaceClaim,
    Project,
    Request,
    Tenant,
)

AGES = {"1h": timedelta(hours=1), "1d": timedelta(days=1), "7d": timedelta(days=7)}


def _signed_in(request) -> bool:
    return request is not None and request.user.is_authenticated


def visible_tenants(request) -> QuerySet[Tenant]:
    """Filter choices name only tenants the user may see."""
    from tenants.selectors import tenants_for_user

    return tenants_for_user(request.user) if _signed_in(request) else Tenant.objects.none()


def _tenant_filter() -> django_filters.ModelChoiceFilter:
    """A tenant, by slug, among those the user may see."""
    return django_filters.ModelChoiceFilter(
        queryset=visible_tenants, to_field_name="slug", empty_label="Any tenant"
    )


class RequestFilterSet(django_filters.FilterSet):
    tenant = _tenant_filter()
    kind = django_filters.ChoiceFilter(choices=RequestKind.choices, empty_label="Any kind")
    state = django_filters.ChoiceFilter(choices=RequestState.choices, empty_label="Any state")
    # The OpenAPI schema cannot tell a method filter's type: a tier's slug.
    tier = extend_schema_field(OpenApiTypes.STR)(
        django_filters.ModelChoiceFilter(
            queryset=EnvironmentTier.objects.all(),
            to_field_name="slug",
            method="filter_tier",
            empty_label="Any tier",
            label="Tier",
        )
    )
    older_than = django_filters.ChoiceFilter(
        label="Waiting longer than",
        method="filter_age",
        empty_label="Any age",
        choices=[("1h", "an hour"), ("1d", "a day"), ("7d", "a week")],
    )

    class Meta:
        model = Request
        fields = ["tenant", "kind", "state", "tier", "older_than"]

    def filter_tier(self, queryset: QuerySet, name: str, tier: EnvironmentTier) -> QuerySet:
        # New namespaces claim their tier; changes name a namespace that has one.
        existing = Namespace.objects.filter(tier=tier).values("name")
        return (
            queryset.annotate(named_namespace=KT("payload__namespace"))
            .filter(
                Q(payload__tier=tier.slug)
                | Q(pk__in=Namespace.objects.filter(tier=tier).values("request_id"))
                | Q(named_namespace__in=existing)
            )
            .distinct()
        )

    def filter_age(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        return queryset.filter(created_at__lte=timezone.now() - AGES[value])


class AuditEventFilterSet(django_filters.FilterSet):
    tenant = _tenant_filter()
    action = django_filters.CharFilter(lookup_expr="startswith", label="Action starts with")
    actor = django_filters.CharFilter(field_name="actor_label", label="Actor")
    # Days as bounds on created_at itself (the start of the day, the start of the next), in
    # the current time zone as `created_at__date` would read them, so that the index on
    # created_at answers them: a date taken of every row scans the whole log.
    since = django_filters.DateFilter(method="from_day", label="From (date)")
    until = django_filters.DateFilter(method="through_day", label="Until (date)")

    class Meta:
        model = AuditEvent
        fields = ["tenant", "action", "actor", "since", "until"]

    def from_day(self, queryset: QuerySet, name: str, value: date) -> QuerySet:
        return queryset.filter(created_at__gte=_start_of(value))

    def through_day(self, queryset: QuerySet, name: str, value: date) -> QuerySet:
        if value == date.max:  # through the last day there is: every event
            return queryset
        return queryset.filter(created_at__lt=_start_of(value + timedelta(days=1)))


def _start_of(day: date) -> datetime:
    return datetime.combine(day, time.min, tzinfo=timezone.get_current_timezone())


def visible_projects(request) -> QuerySet[Project]:
    from tenants.selectors import projects_visible_to

    return projects_visible_to(request.user) if _signed_in(request) else Project.objects.none()


class NamespaceFilterSet(django_filters.FilterSet):
    tenant = _tenant_filter()
    tier = django_filters.ModelChoiceFilter(
        queryset=EnvironmentTier.objects.all(), to_field_name="slug", empty_label="Any tier"
    )
    cluster = django_filters.CharFilter(field_name="cluster__name", label="Cluster")
    state = django_filters.ChoiceFilter(choices=NamespaceState.choices, empty_label="Any state")
    project = django_filters.ModelChoiceFilter(queryset=visible_projects, label="Project (id)")

    class Meta:
        model = Namespace
        fields = ["tenant", "tier", "cluster", "state", "project"]


class ProjectFilterSet(django_filters.FilterSet):
    tenant = _tenant_filter()
    gitops_engine = django_filters.ChoiceFilter(choices=GitOpsEngine.choices)

    class Meta:
        model = Project
        fields = ["tenant", "gitops_engine"]


class EphemeralEnvironmentFilterSet(django_filters.FilterSet):
    tenant = _tenant_filter()
    project = django_filters.CharFilter(field_name="project__name", label="Project (name)")
    env_slug = django_filters.CharFilter(field_name="slug", label="Environment slug")
    state = django_filters.ChoiceFilter(choices=EnvironmentState.choices, empty_label="Any state")

    class Meta:
        model = EphemeralEnvironment
        fields = ["tenant", "project", "env_slug", "state"]


class NamespaceClaimFilterSet(django_filters.FilterSet):
    """The namespace registry's page (platform admins)."""

    name = django_filters.CharFilter(lookup_expr="icontains", label="Name contains")
    cluster = django_filters.ModelChoiceFilter(
        queryset=Cluster.objects.all(), to_field_name="name", empty_label="Any cluster"
    )
    tenant = django_filters.ModelChoiceFilter(
        queryset=Tenant.objects.all(), to_field_name="slug", empty_label="Any owner"
    )
    purpose = django_filters.ChoiceFilter(choices=NamePurpose.choices, empty_label="Any purpose")

    class Meta:
        model = NamespaceClaim
        fields = ["name", "cluster", "tenant", "purpose"]
