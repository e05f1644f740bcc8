"""The access map over the API: a group, a person, a namespace, and the search."""

from __future__ import annotations

from rest_framework import serializers


class GrantSerializer(serializers.Serializer):
    system = serializers.ChoiceField(
        choices=["kubernetes", "argocd", "kargo", "flux"], help_text="Where the right takes effect."
    )
    cluster = serializers.CharField()
    namespace = serializers.CharField()
    group = serializers.CharField(help_text='The OIDC group; "" for a GitOps identity.')
    identity = serializers.CharField(
        help_text='For a GitOps identity, the ServiceAccount it acts as; else "".'
    )
    tenant_role = serializers.CharField(help_text='owner, member or viewer; "" for an identity.')
    object = serializers.CharField(
        source="obj", help_text='What grants it: "RoleBinding <ns>/<name>".'
    )
    role = serializers.CharField(
        help_text="The ClusterRole or Role, Argo CD project role or Kargo ServiceAccount."
    )
    summary = serializers.CharField(help_text="What it allows, in plain words.")
    verbs = serializers.CharField(
        help_text='Counted from the role\'s rules, where Berth ships the role; else "".'
    )


class RuleRefSerializer(serializers.Serializer):
    name = serializers.CharField()
    condition = serializers.CharField()


class TenantAccessSerializer(serializers.Serializer):
    tenant = serializers.CharField(source="tenant.slug")
    roles = serializers.ListField(
        child=serializers.CharField(), help_text="The roles the tenant names the group(s) for."
    )
    berth = serializers.ListField(
        child=serializers.CharField(), help_text="What the strongest role may do in Berth."
    )
    approves_by = RuleRefSerializer(
        many=True, help_text="The enabled rules whose requests an owner decides."
    )
    grants = GrantSerializer(many=True)
    identities = GrantSerializer(
        many=True, help_text="What the tenant's files may do once Flux or Argo CD applies them."
    )


class PersonRefSerializer(serializers.Serializer):
    username = serializers.CharField()
    display_name = serializers.CharField()


class GroupMapSerializer(serializers.Serializer):
    group = serializers.CharField()
    platform_admin = serializers.BooleanField(help_text="BERTH_PLATFORM_ADMIN_GROUPS names it.")
    tenants = TenantAccessSerializer(many=True)
    people = PersonRefSerializer(many=True, help_text="Who held it at their last sign-in.")


class MembershipAccessSerializer(serializers.Serializer):
    tenant = serializers.CharField(source="tenant.slug")
    role = serializers.CharField()
    source = serializers.ChoiceField(choices=["oidc", "manual"])
    via_groups = serializers.ListField(
        child=serializers.CharField(), help_text="The person's groups that give the role."
    )
    approve_chain = serializers.ListField(
        child=serializers.CharField(),
        help_text="Why the person may decide requests here, step by step; [] if they may not.",
    )
    berth = serializers.ListField(child=serializers.CharField(), source="access.berth")
    grants = GrantSerializer(many=True, source="access.grants")


class PersonMapSerializer(serializers.Serializer):
    username = serializers.CharField(source="person.username")
    display_name = serializers.CharField(source="person.display_name")
    groups = serializers.ListField(
        child=serializers.CharField(), help_text="The groups at their last sign-in."
    )
    platform_admin = serializers.BooleanField()
    platform_admin_chain = serializers.ListField(
        child=serializers.CharField(), source="admin_chain"
    )
    memberships = MembershipAccessSerializer(many=True)


class NamespaceMapSerializer(serializers.Serializer):
    namespace = serializers.CharField(source="namespace.name")
    cluster = serializers.CharField(source="namespace.cluster.name")
    tenant = serializers.CharField(source="namespace.tenant.slug")
    tier = serializers.CharField(source="namespace.tier.slug")
    roles = serializers.DictField(
        child=serializers.ListField(child=serializers.CharField()),
        help_text="Tenant role -> the groups the tenant names for it.",
    )
    grants = GrantSerializer(many=True)


class NamespaceRefSerializer(serializers.Serializer):
    name = serializers.CharField()
    cluster = serializers.CharField(source="cluster.name")
    tenant = serializers.CharField(source="tenant.slug")


class AccessQuerySerializer(serializers.Serializer):
    q = serializers.CharField(
        max_length=200,
        help_text="Part of a group's, person's "
        "(username, name, e-mail) or live "
        "namespace's name; any case.",
    )


class AccessSearchSerializer(serializers.Serializer):
    query = serializers.CharField()
    groups = serializers.ListField(child=serializers.CharField())
    people = PersonRefSerializer(many=True)
    namespaces = NamespaceRefSerializer(many=True)
