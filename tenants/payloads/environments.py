"""Payloads of ephemeral environments: one started (named by the tenant's environment
rules) and one ended.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from rest_framework import serializers

from tenants import quantities
from tenants.choices import EndCause, EnvironmentState, NamePurpose, NamespaceState, RequestState
from tenants.models import Cluster, EnvironmentTier, Namespace, Project
from tenants.name_registry import claim_of, kept_for_tier, name_problem
from tenants.naming import RESERVED_SUFFIXES, namespace_name
from tenants.payloads.base import TenantScoped
from tenants.payloads.fields import QuantityField, TtlField, dns_label


class EphemeralPayload(TenantScoped):
    """A short-lived environment of a project, named by the tenant's environment rules."""

    project = serializers.SlugField(max_length=63)
    env_slug = serializers.CharField(max_length=63, validators=[dns_label])
    branch = serializers.CharField(max_length=255, required=False, allow_blank=True, default="")
    mr_id = serializers.RegexField(
        r"^[0-9]{1,20}\Z",
        required=False,
        allow_blank=True,
        default="",
        error_messages={"invalid": "A merge request id is a number."},
    )
    cluster = serializers.SlugField(required=False)
    tier = serializers.SlugField(required=False)
    ttl = TtlField(required=False)
    cpu = QuantityField(convert=quantities.cpu_to_millis, source="cpu_millis", required=False)
    memory = QuantityField(convert=quantities.memory_to_mib, source="memory_mib", required=False)
    storage = QuantityField(convert=quantities.storage_to_gib, source="storage_gib", required=False)

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        from tenants import environment_rules

        project = Project.objects.filter(tenant=self.tenant, name=data["project"]).first()
        if project is None:
            raise serializers.ValidationError(
                {"project": f"{data['project']!r} is not a project of this tenant."}
            )
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
        live = (
            project.ephemeral_environments.exclude(state=EnvironmentState.ENDED)
            .filter(slug=data["env_slug"])
            .first()
        )
        if live is not None:
            raise serializers.ValidationError(
                {
                    "env_slug": (
                        f"{project.name} already has an environment {live.slug} (#{live.pk}, "
                        f"{live.get_state_display().lower()}): extend it or stop it first."
                    )
                }
            )
        variables = {
            "tenant": self.tenant.slug,
            "project": project.name,
            "env_slug": data["env_slug"],
            "branch": data["branch"],
            "mr_id": data["mr_id"],
        }
        try:
            choice = environment_rules.choose(list(self.tenant.environment_rules.all()), variables)
        except environment_rules.RuleError as exc:
            raise serializers.ValidationError({"env_slug": str(exc)}) from exc
        if choice is None:
            raise serializers.ValidationError(
                {
                    "env_slug": (
                        f"No environment rule of {self.tenant.slug} matches this environment "
                        f"({', '.join(f'{k}={v!r}' for k, v in variables.items())})."
                    )
                }
            )
        if choice.refused:
            raise serializers.ValidationError({"env_slug": choice.refused})
        self._check_env_slug(data["env_slug"], project, choice.namespace)
        problem = environment_rules.name_problem(
            choice.namespace, tenant=self.tenant.slug
        ) or kept_for_tier(self.tenant, choice.namespace)
        if problem:
            raise serializers.ValidationError(
                {
                    "env_slug": (
                        f"{environment_rules.rule_named(choice)} names the namespace "
                        f"{choice.namespace}, which an environment may not have: {problem}"
                    )
                }
            )
        data.update(
            cluster=cluster,
            tier=tier.slug,
            namespace=choice.namespace,
            shared=choice.shared,
            rule_position=choice.rule_position,
            creates_namespace=self._namespace_free(
                choice.namespace,
                cluster,
                choice.shared,
                {"purpose": NamePurpose.SHARED}
                if choice.shared
                else {
                    "purpose": NamePurpose.EPHEMERAL,
                    "app": project.name,
                    "environment": data["env_slug"],
                },
            ),
        )
        return data

    def _check_env_slug(self, slug: str, project: Project, named: str) -> None:
        """An environment slug may not be a word Berth ends a project's own names with,
        judged by the namespace the rule names (`named`): with `<tenant>-<project>-<slug>`,
        `kargo` would be the project's Kargo namespace; a tier's slug is refused wherever
        the environment lives, as its GitOps application (`<tenant>-<project>-<slug>`,
        provisioning.gitops_plan.layout) would be the tier's."""
        own = namespace_name(self.tenant.slug, project.name, slug)
        is_tier = EnvironmentTier.objects.filter(slug=slug).exists()
        if named == own and slug in RESERVED_SUFFIXES:
            reason = f"{own} is the project's Kargo namespace"
        elif named == own and is_tier:
            reason = f"{own} is the project's {slug} namespace"
        elif is_tier:
            reason = (
                f"it is a tier, and the environment's GitOps application would be named "
                f"{own}, as the project's {slug} one is"
            )
        else:
            return
        raise serializers.ValidationError(
            {"env_slug": (f"{slug!r} is reserved: {reason}. Choose another environment slug.")}
        )

    def _ephemeral_tier(self, slug: str | None):
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
            raise serializers.ValidationError(
                {
                    "tier": (
                        f"Tier {slug!r} is not ephemeral: request its environment as a project "
                        "environment instead."
                    )
                }
            )
        return tier

    def _cluster_for(self, project: Project, name: str | None) -> str:
        if name:
            self._cluster(name)
            return name
        used = (
            Namespace.objects.filter(project=project, state=NamespaceState.ACTIVE)
            .order_by("pk")
            .values_list("cluster__name", flat=True)
            .first()
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
    def _ttl(tier, asked: int | None) -> int:
        longest = tier.max_ttl or settings.BERTH_EPHEMERAL_MAX_TTL
        if asked is None:
            default = tier.default_ttl or settings.BERTH_EPHEMERAL_DEFAULT_TTL
            return int(min(default, longest).total_seconds())
        if asked > longest.total_seconds():
            raise serializers.ValidationError(
                {
                    "ttl": (
                        f"{quantities.seconds_to_duration(asked)} is longer than the {tier.slug} "
                        "tier "
                        f"allows ({quantities.seconds_to_duration(int(longest.total_seconds()))})."
                    )
                }
            )
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
            raise serializers.ValidationError(
                {
                    "env_slug": (
                        f"The shared namespace {name} is {state}"
                        + (f" (request #{claim.request_id})" if claim.request_id else "")
                        + ": try again once it is active."
                    )
                }
            )
        return False


class EndEnvironmentPayload(TenantScoped):
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
            or (
                environment.state == EnvironmentState.STARTING
                and environment.request.state == RequestState.FAILED
            )
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
