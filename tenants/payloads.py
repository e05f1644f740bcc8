"""Per-kind validation of request payloads, shared by web forms and the REST API.

Each kind has a serializer that checks shape and the tenant's own limits and returns a
normalised payload (quantities as integers in Berth's units, references by slug/name).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import serializers

from tenants import quantities
from tenants.choices import (
    EndCause,
    EnvironmentState,
    GitOpsEngine,
    NamePurpose,
    NamespaceState,
    RequestKind,
    RequestState,
)
from tenants.models import Cluster, EnvironmentTier, Namespace, Project, Tenant
from tenants.naming import (
    RESERVED_SUFFIXES,
    argocd_apps_namespace,
    kargo_namespace,
    namespace_name,
    outside_prefix_reason,
    reserved_reason,
)
from tenants.selectors.names import claim_of, kept_for_tier, name_problem
from tenants.validators import validate_dns_label

# A DNS label on its own; the composed namespace name is shortened to fit if needed.
APP_NAME_MAX = 63


def _dns_label(value: str) -> str:
    try:
        validate_dns_label(value)
    except DjangoValidationError as exc:
        raise serializers.ValidationError(exc.messages) from exc
    return value


class QuantityField(serializers.CharField):
    """A Kubernetes quantity string converted to an integer in one of Berth's units."""

    def __init__(self, *, convert, **kwargs) -> None:  # noqa: ANN001 - a converter function
        self.convert = convert
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> int:
        text = super().to_internal_value(data)
        try:
            return self.convert(text)
        except quantities.QuantityError as exc:
            raise serializers.ValidationError(str(exc)) from exc


class TtlField(serializers.CharField):
    """A time to live: 30m, 2h, 3d, 1d12h or seconds, converted to seconds (at least 60)."""

    def to_internal_value(self, data: Any) -> int:
        try:
            return quantities.ttl_to_seconds(super().to_internal_value(data))
        except quantities.QuantityError as exc:
            raise serializers.ValidationError(str(exc)) from exc


class _TenantScoped(serializers.Serializer):
    def __init__(self, *args, tenant: Tenant, **kwargs) -> None:  # noqa: ANN002, ANN003
        self.tenant = tenant
        super().__init__(*args, **kwargs)

    def _tier(self, slug: str):  # noqa: ANN202 - EnvironmentTier
        tier = self.tenant.allowed_tiers.filter(slug=slug).first()
        if tier is None:
            raise serializers.ValidationError(
                {"tier": f"Tier {slug!r} is not open to this tenant."}
            )
        return tier

    def _cluster(self, name: str) -> None:
        if not self.tenant.allowed_clusters.filter(name=name).exists():
            raise serializers.ValidationError(
                {"cluster": f"Cluster {name!r} is not open to this tenant."}
            )

    @staticmethod
    def _within_tier(tier, data: dict[str, Any]) -> None:  # noqa: ANN001 - EnvironmentTier
        limits = {
            "cpu": ("cpu_millis", tier.max_cpu_millis, quantities.millis_to_cpu),
            "memory": ("memory_mib", tier.max_memory_mib, quantities.mib_to_memory),
            "storage": ("storage_gib", tier.max_storage_gib, quantities.gib_to_storage),
        }
        errors = {}
        for field, (key, maximum, show) in limits.items():
            if key in data and data[key] > maximum:
                errors[field] = (
                    f"{show(data[key])} is more than the {tier.slug} tier allows ({show(maximum)})."
                )
        if errors:
            raise serializers.ValidationError(errors)

    def _check_names(self, wanted: list[dict[str, str]], *, cluster: str,
                     field: str = "app") -> None:
        """Refuse reserved names, names outside the tenant's prefix and names the registry
        holds for something else (or for this very thing, already requested)."""
        where = Cluster.objects.get(name=cluster)
        problems = []
        for owner in wanted:
            name = owner.pop("name")
            reason = reserved_reason(
                name, berth_namespace=settings.BERTH_NAMESPACE
            ) or outside_prefix_reason(name, tenant=self.tenant.slug)
            reason = reason or name_problem(where, name, tenant=self.tenant, **owner)
            if reason:
                problems.append(reason)
        if problems:
            raise serializers.ValidationError({field: problems})

    def _live_namespace(self, name: str) -> Namespace:
        namespace = Namespace.objects.filter(
            tenant=self.tenant, name=name, state=NamespaceState.ACTIVE
        ).first()
        if namespace is None:
            raise serializers.ValidationError(
                {"namespace": f"{name!r} is not an active namespace of this tenant."}
            )
        return namespace


class QuotaFields(serializers.Serializer):
    cpu = QuantityField(convert=quantities.cpu_to_millis, source="cpu_millis")
    memory = QuantityField(convert=quantities.memory_to_mib, source="memory_mib")
    storage = QuantityField(
        convert=quantities.storage_to_gib, source="storage_gib", required=False, default=0
    )


class NamespacePayload(_TenantScoped, QuotaFields):
    app = serializers.CharField(max_length=APP_NAME_MAX, validators=[_dns_label])
    tier = serializers.SlugField()
    cluster = serializers.SlugField()

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        tier = self._tier(data["tier"])
        self._cluster(data["cluster"])
        self._within_tier(tier, data)
        self._check_names([_tier_owner(self.tenant, data["app"], tier.slug)],
                          cluster=data["cluster"])
        return data


class ProjectPayload(_TenantScoped):
    app = serializers.CharField(max_length=APP_NAME_MAX, validators=[_dns_label])
    engine = serializers.ChoiceField(choices=GitOpsEngine.choices)
    cluster = serializers.SlugField()
    tiers = serializers.ListField(
        child=serializers.SlugField(), min_length=1, default=["dev", "staging", "prod"]
    )

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        for slug in data["tiers"]:
            self._tier(slug)
        self._cluster(data["cluster"])
        if Project.objects.filter(tenant=self.tenant, name=data["app"]).exists():
            raise serializers.ValidationError({"app": f"Project {data['app']!r} already exists."})
        wanted = [_tier_owner(self.tenant, data["app"], slug) for slug in data["tiers"]]
        if data["engine"] == GitOpsEngine.ARGOCD_KARGO:
            wanted.append({"name": kargo_namespace(self.tenant.slug, data["app"]),
                           "purpose": NamePurpose.KARGO, "app": data["app"]})
        if data["engine"] in (GitOpsEngine.ARGOCD, GitOpsEngine.ARGOCD_KARGO):
            wanted.append({"name": argocd_apps_namespace(self.tenant.slug),
                           "purpose": NamePurpose.ARGOCD_APPS})
        self._check_names(wanted, cluster=data["cluster"])
        return data


class EnvironmentPayload(_TenantScoped, QuotaFields):
    project = serializers.SlugField()
    tier = serializers.SlugField()
    cluster = serializers.SlugField()

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        if not Project.objects.filter(tenant=self.tenant, name=data["project"]).exists():
            raise serializers.ValidationError(
                {"project": f"{data['project']!r} is not a project of this tenant."}
            )
        tier = self._tier(data["tier"])
        self._cluster(data["cluster"])
        self._within_tier(tier, data)
        self._check_names([_tier_owner(self.tenant, data["project"], tier.slug)],
                          cluster=data["cluster"], field="tier")
        return data


class QuotaChangePayload(_TenantScoped, QuotaFields):
    namespace = serializers.CharField(max_length=63)

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        namespace = self._live_namespace(data["namespace"])
        self._within_tier(namespace.tier, data)
        return data


class DecommissionPayload(_TenantScoped):
    namespace = serializers.CharField(max_length=63)
    reason = serializers.CharField(max_length=500)

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        namespace = self._live_namespace(data["namespace"])
        hosted = namespace.ephemeral_environments.exclude(state=EnvironmentState.ENDED)
        if hosted.exists():
            slugs = ", ".join(sorted(hosted.values_list("slug", flat=True))[:5])
            raise serializers.ValidationError({"namespace": (
                f"{namespace.name} hosts ephemeral environments ({slugs}): end them first."
            )})
        return data


class EphemeralPayload(_TenantScoped):
    """A short-lived environment of a project, named by the tenant's environment rules."""

    project = serializers.SlugField(max_length=63)
    env_slug = serializers.CharField(max_length=63, validators=[_dns_label])
    branch = serializers.CharField(max_length=255, required=False, allow_blank=True, default="")
    mr_id = serializers.RegexField(
        r"^[0-9]{1,20}$", required=False, allow_blank=True, default="",
        error_messages={"invalid": "A merge request id is a number."},
    )
    cluster = serializers.SlugField(required=False)
    tier = serializers.SlugField(required=False)
    ttl = TtlField(required=False)
    cpu = QuantityField(convert=quantities.cpu_to_millis, source="cpu_millis", required=False)
    memory = QuantityField(convert=quantities.memory_to_mib, source="memory_mib", required=False)
    storage = QuantityField(
        convert=quantities.storage_to_gib, source="storage_gib", required=False
    )

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        from tenants import environment_rules

        project = Project.objects.filter(tenant=self.tenant, name=data["project"]).first()
        if project is None:
            raise serializers.ValidationError(
                {"project": f"{data['project']!r} is not a project of this tenant."}
            )
        self._check_env_slug(data["env_slug"], project)
        tier = self._ephemeral_tier(data.get("tier"))
        cluster = self._cluster_for(project, data.get("cluster"))
        for key, default in (
            ("cpu_millis", tier.default_cpu_millis),
            ("memory_mib", tier.default_memory_mib),
            ("storage_gib", tier.default_storage_gib),
        ):
            data.setdefault(key, default)
        self._within_tier(tier, data)
        data["ttl_seconds"] = self._ttl(tier, data.pop("ttl", None))
        live = project.ephemeral_environments.exclude(state=EnvironmentState.ENDED).filter(
            slug=data["env_slug"]
        ).first()
        if live is not None:
            raise serializers.ValidationError({"env_slug": (
                f"{project.name} already has an environment {live.slug} (#{live.pk}, "
                f"{live.get_state_display().lower()}): extend it or stop it first."
            )})
        variables = {
            "tenant": self.tenant.slug, "project": project.name, "env_slug": data["env_slug"],
            "branch": data["branch"], "mr_id": data["mr_id"],
        }
        try:
            choice = environment_rules.choose(
                list(self.tenant.environment_rules.all()), variables
            )
        except environment_rules.RuleError as exc:
            raise serializers.ValidationError({"env_slug": str(exc)}) from exc
        if choice is None:
            raise serializers.ValidationError({"env_slug": (
                f"No environment rule of {self.tenant.slug} matches this environment "
                f"({', '.join(f'{k}={v!r}' for k, v in variables.items())})."
            )})
        if choice.refused:
            raise serializers.ValidationError({"env_slug": choice.refused})
        problem = environment_rules.name_problem(
            choice.namespace, tenant=self.tenant.slug
        ) or kept_for_tier(self.tenant, choice.namespace)
        if problem:
            raise serializers.ValidationError({"env_slug": f"The rule names {problem}"})
        data.update(
            cluster=cluster,
            tier=tier.slug,
            namespace=choice.namespace,
            shared=choice.shared,
            rule_position=choice.rule_position,
            creates_namespace=self._namespace_free(
                choice.namespace, cluster, choice.shared,
                {"purpose": NamePurpose.SHARED} if choice.shared else
                {"purpose": NamePurpose.EPHEMERAL, "app": project.name,
                 "environment": data["env_slug"]},
            ),
        )
        return data

    def _check_env_slug(self, slug: str, project: Project) -> None:
        """An environment slug may not be a word Berth ends a project's own namespaces with:
        `<tenant>-<project>-<slug>` would be the project's Kargo or tier namespace."""
        reason = None
        if slug in RESERVED_SUFFIXES:
            reason = "the project's Kargo namespace"
        elif EnvironmentTier.objects.filter(slug=slug).exists():
            reason = f"the project's {slug} namespace"
        if reason:
            name = namespace_name(self.tenant.slug, project.name, slug)
            raise serializers.ValidationError({"env_slug": (
                f"{slug!r} is reserved: {name} is {reason}. Choose another environment slug."
            )})

    def _ephemeral_tier(self, slug: str | None):  # noqa: ANN202 - EnvironmentTier
        tiers = self.tenant.allowed_tiers.filter(is_ephemeral=True).order_by("position", "slug")
        if slug is None:
            tier = tiers.first()
            if tier is None:
                raise serializers.ValidationError(
                    {"tier": "No ephemeral tier is open to this tenant; ask a platform admin."}
                )
            return tier
        tier = self._tier(slug)
        if not tier.is_ephemeral:
            raise serializers.ValidationError({"tier": (
                f"Tier {slug!r} is not ephemeral: request its environment as a project "
                "environment instead."
            )})
        return tier

    def _cluster_for(self, project: Project, name: str | None) -> str:
        if name:
            self._cluster(name)
            return name
        used = (
            Namespace.objects.filter(project=project, state=NamespaceState.ACTIVE)
            .order_by("pk").values_list("cluster__name", flat=True).first()
        )
        if used:
            return used
        allowed = list(self.tenant.allowed_clusters.values_list("name", flat=True)[:2])
        if len(allowed) != 1:
            raise serializers.ValidationError(
                {"cluster": "Say which cluster: the project has no environment yet."}
            )
        return allowed[0]

    @staticmethod
    def _ttl(tier, asked: int | None) -> int:  # noqa: ANN001 - EnvironmentTier
        longest = tier.max_ttl or settings.BERTH_EPHEMERAL_MAX_TTL
        if asked is None:
            default = tier.default_ttl or settings.BERTH_EPHEMERAL_DEFAULT_TTL
            return int(min(default, longest).total_seconds())
        if asked > longest.total_seconds():
            raise serializers.ValidationError({"ttl": (
                f"{quantities.seconds_to_duration(asked)} is longer than the {tier.slug} tier "
                f"allows ({quantities.seconds_to_duration(int(longest.total_seconds()))})."
            )})
        return asked

    def _namespace_free(self, name: str, cluster: str, shared: bool, owner: dict) -> bool:
        """True when the environment creates its namespace; refuses a name it cannot use
        (held by the registry for anything but a shared namespace of this tenant)."""
        where = Cluster.objects.get(name=cluster)
        problem = name_problem(where, name, tenant=self.tenant, **owner)
        if problem:
            raise serializers.ValidationError({"env_slug": problem})
        claim = claim_of(where, name)
        if claim is None:
            return True
        namespace = claim.namespace
        if namespace is None or namespace.state != NamespaceState.ACTIVE:
            state = namespace.get_state_display().lower() if namespace else "not provisioned"
            raise serializers.ValidationError({"env_slug": (
                f"The shared namespace {name} is {state}"
                + (f" (request #{claim.request_id})" if claim.request_id else "")
                + ": try again once it is active."
            )})
        return False


class EndEnvironmentPayload(_TenantScoped):
    environment = serializers.IntegerField(min_value=1)
    cause = serializers.ChoiceField(choices=EndCause.choices, default=EndCause.ENDED_BY_USER)
    reason = serializers.CharField(max_length=500, required=False, allow_blank=True, default="")

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        from tenants.models import EphemeralEnvironment

        environment = EphemeralEnvironment.objects.filter(
            tenant=self.tenant, pk=data["environment"]
        ).first()
        # One whose provisioning failed can be ended too: whatever it made is removed.
        endable = environment is not None and (
            environment.state == EnvironmentState.LIVE
            or (environment.state == EnvironmentState.STARTING
                and environment.request.state == RequestState.FAILED)
        )
        if not endable:
            state = environment.get_state_display().lower() if environment else "not found"
            raise serializers.ValidationError(
                {"environment": f"Environment #{data['environment']} is {state}, not live."}
            )
        data["namespace"] = environment.namespace.name
        data["project"] = environment.project.name
        data["env_slug"] = environment.slug
        return data


def _tier_owner(tenant: Tenant, app: str, tier: str) -> dict[str, str]:
    return {"name": namespace_name(tenant.slug, app, tier), "purpose": NamePurpose.TIER,
            "app": app, "tier": tier}


PAYLOADS: dict[str, type[_TenantScoped]] = {
    RequestKind.NAMESPACE: NamespacePayload,
    RequestKind.PROJECT: ProjectPayload,
    RequestKind.ENVIRONMENT: EnvironmentPayload,
    RequestKind.QUOTA_CHANGE: QuotaChangePayload,
    RequestKind.DECOMMISSION: DecommissionPayload,
    RequestKind.EPHEMERAL: EphemeralPayload,
    RequestKind.END_ENVIRONMENT: EndEnvironmentPayload,
}


def validate_payload(*, kind: str, tenant: Tenant, payload: dict[str, Any]) -> dict[str, Any]:
    """Return the normalised payload or raise rest_framework's ValidationError by field."""
    if kind not in PAYLOADS:
        raise serializers.ValidationError({"kind": f"Unknown request kind {kind!r}."})
    serializer = PAYLOADS[kind](data=payload, tenant=tenant)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)
