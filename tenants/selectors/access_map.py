"""The access map: what an OIDC group, a person or a namespace's bindings come down to, in
Kubernetes, Argo CD, Kargo, Flux and Berth itself; searchable by group, person, namespace.

The cluster side is read off the objects the tenants' plans apply (tenants.provisioner.
access_grants), never modelled a second time. Berth's own rights are the ones the checks in
tenants.selectors.rights and .environments make. A viewer sees only the tenants they may
see: a platform admin sees everything; anyone else their own tenants.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.conf import settings
from django.db.models import Q
from django.http import Http404

from tenants import provisioner
from tenants.choices import ApproverRole, MembershipSource, NamespaceState, PolicyOutcome, Role
from tenants.models import AccessGrant, ApprovalRule, Membership, Namespace, Tenant, User
from tenants.provisioner import ARGOCD, KARGO, KUBERNETES, Grant
from tenants.selectors.rights import is_platform_admin

ROLE_ORDER = (Role.OWNER, Role.MEMBER, Role.VIEWER)  # strongest first
SYSTEMS = (KUBERNETES, ARGOCD, KARGO)  # where groups get rights, in the order pages show

# What each tenant role may do in Berth (tenants.selectors.rights, .environments, .audit
# make these checks); approving comes from the rules (approval_rules_for_owners).
BERTH_RIGHTS: dict[str, tuple[str, ...]] = {
    Role.VIEWER: ("see the tenant, its namespaces, requests and environments", "submit requests"),
    Role.MEMBER: (
        "see the tenant, its namespaces, requests and environments",
        "submit requests",
        "end the tenant's ephemeral environments",
    ),
    Role.OWNER: (
        "see the tenant, its namespaces, requests and environments",
        "submit requests",
        "extend and end the tenant's ephemeral environments",
        "change the tenant's environment rules",
        "read the tenant's audit log",
    ),
}
PLATFORM_ADMIN_RIGHTS = (
    "everything in every tenant: decide any request (never their own), onboard and change "
    "tenants, change the approval rules, add clusters, read the whole audit log",
)


@dataclass
class TenantAccess:
    """What one tenant gives: the roles held there and what they become everywhere."""

    tenant: Tenant
    roles: list[str]
    berth: list[str]
    approves_by: list[ApprovalRule]  # rules whose requests an owner decides
    grants: list[Grant]  # Kubernetes, Argo CD and Kargo rights of the group(s)
    identities: list[Grant] = field(default_factory=list)  # what the tenant's files may do

    def grants_in(self, system: str) -> list[Grant]:
        return [grant for grant in self.grants if grant.system == system]

    @property
    def role_legend(self) -> list[tuple[str, str, str]]:
        """(role, what it allows, its verbs) once per Kubernetes role the grants bind."""
        seen: dict[str, tuple[str, str, str]] = {}
        for grant in self.grants_in(KUBERNETES):
            seen.setdefault(grant.role, (grant.role, grant.summary, grant.verbs))
        return list(seen.values())

    @property
    def by_system(self) -> list[tuple[str, list[Grant]]]:
        """The grants per system, in the order pages show them (empty ones too)."""
        return [(system, self.grants_in(system)) for system in SYSTEMS]


@dataclass
class GroupMap:
    group: str
    platform_admin: bool  # BERTH_PLATFORM_ADMIN_GROUPS names it
    tenants: list[TenantAccess]
    people: list[User]  # who held it at their last sign-in (among those the viewer sees)


@dataclass
class MembershipAccess:
    """One of a person's memberships and the chain that gives it."""

    access: TenantAccess
    role: str
    source: str  # oidc or manual
    via_groups: list[str]  # the person's groups the tenant names for this role
    approve_chain: list[str] = field(default_factory=list)  # why they may decide, if they may

    @property
    def tenant(self) -> Tenant:
        return self.access.tenant


@dataclass
class PersonMap:
    person: User
    groups: list[str]
    platform_admin: bool
    platform_admin_via: list[str]
    memberships: list[MembershipAccess]
    admin_chain: list[str] = field(default_factory=list)  # why they are a platform admin


@dataclass
class NamespaceMap:
    namespace: Namespace
    grants: list[Grant]
    roles: dict[str, list[str]]  # tenant role -> the groups the tenant names for it
    # Who holds a role there by an access grant now (bound to their user name), soonest end
    # first: with its reason and its request.
    access_grants: list[AccessGrant] = field(default_factory=list)


@dataclass
class SearchResults:
    query: str
    groups: list[str]
    people: list[User]
    namespaces: list[Namespace]


def _visible_tenants(viewer: User):
    tenants = Tenant.objects.order_by("slug")
    return tenants if is_platform_admin(viewer) else tenants.filter(memberships__user=viewer)


def approval_rules_for_owners() -> list[ApprovalRule]:
    """The enabled rules that send what they match to a tenant owner to decide."""
    return list(
        ApprovalRule.objects.filter(
            enabled=True,
            outcome=PolicyOutcome.REQUIRE,
            approver_role=ApproverRole.TENANT_OWNER,
        ).order_by("position", "id")
    )


def _roles_of(tenant: Tenant, groups: set[str]) -> list[str]:
    return [role for role in ROLE_ORDER if set(tenant.groups_for(role)) & groups]


def _tenant_access(
    tenant: Tenant,
    groups: set[str],
    owner_rules: list[ApprovalRule],
    *,
    with_identities: bool = True,
) -> TenantAccess:
    roles = _roles_of(tenant, groups)
    strongest = roles[0] if roles else None
    grants = provisioner.access_grants(tenant)
    return TenantAccess(
        tenant=tenant,
        roles=roles,
        berth=list(BERTH_RIGHTS[strongest]) if strongest else [],
        approves_by=owner_rules if strongest == Role.OWNER else [],
        grants=[grant for grant in grants if grant.group in groups],
        identities=[grant for grant in grants if not grant.group] if with_identities else [],
    )


def _names_group(tenant: Tenant, group: str) -> bool:
    return any(group in tenant.groups_for(role) for role in ROLE_ORDER)


def known_groups(viewer: User) -> list[tuple[str, list[tuple[Tenant, str]]]]:
    """Every group the viewer's tenants name, with the tenants and roles it gives there;
    for platform admins also the platform-admin groups."""
    found: dict[str, list[tuple[Tenant, str]]] = {}
    for tenant in _visible_tenants(viewer):
        for role in ROLE_ORDER:
            for group in tenant.groups_for(role):
                found.setdefault(group, []).append((tenant, role))
    if is_platform_admin(viewer):
        for group in settings.BERTH_PLATFORM_ADMIN_GROUPS:
            found.setdefault(group, [])
    return sorted(found.items())


def group_map(viewer: User, group: str) -> GroupMap:
    """What `group` gives in each tenant the viewer sees. 404 when it gives nothing there
    and is no platform-admin group (to the viewer, an unknown group)."""
    admin_group = group in settings.BERTH_PLATFORM_ADMIN_GROUPS
    tenants = [tenant for tenant in _visible_tenants(viewer) if _names_group(tenant, group)]
    if not tenants and not (admin_group and is_platform_admin(viewer)):
        raise Http404("No tenant you can see names this group.")
    owner_rules = approval_rules_for_owners()
    return GroupMap(
        group=group,
        platform_admin=admin_group,
        tenants=[_tenant_access(tenant, {group}, owner_rules) for tenant in tenants],
        people=[
            person
            for person in people_visible_to(viewer).order_by("username")
            if group in (person.last_groups or [])
        ],
    )


def people_visible_to(viewer: User):
    """Everyone for a platform admin; else the people who share one of the viewer's tenants."""
    people = User.objects.filter(is_active=True)
    if is_platform_admin(viewer):
        return people
    shared = Membership.objects.filter(user=viewer).values("tenant_id")
    return people.filter(Q(memberships__tenant_id__in=shared) | Q(pk=viewer.pk)).distinct()


def person_map(viewer: User, username: str) -> PersonMap:
    """Why a person may do what they do, in the tenants the viewer sees: their groups at
    their last sign-in, the tenant roles those give, what those roles become."""
    person = people_visible_to(viewer).filter(username=username).first()
    if person is None:
        raise Http404("No such person among those you can see.")
    groups = set(person.last_groups or [])
    visible = _visible_tenants(viewer).values("pk")
    owner_rules = approval_rules_for_owners()
    memberships = []
    for membership in (
        Membership.objects.filter(user=person, tenant_id__in=visible)
        .select_related("tenant")
        .order_by("tenant__slug")
    ):
        tenant = membership.tenant
        access = _tenant_access(tenant, groups, owner_rules, with_identities=False)
        # Berth's right follows the membership (a manual one included); the cluster's
        # follow the groups alone.
        access.berth = list(BERTH_RIGHTS[membership.role])
        access.approves_by = owner_rules if membership.role == Role.OWNER else []
        memberships.append(
            MembershipAccess(
                access=access,
                role=membership.role,
                source=membership.source,
                via_groups=sorted(groups & set(tenant.groups_for(membership.role)))
                if membership.source == MembershipSource.OIDC
                else [],
            )
        )
    admin_via = sorted(groups & set(settings.BERTH_PLATFORM_ADMIN_GROUPS))
    # Only the groups the viewer's own tenants name (and the platform's): another tenant's
    # group names are that tenant's business.
    shown = groups & (
        {group for group, _ in known_groups(viewer)} | set(settings.BERTH_PLATFORM_ADMIN_GROUPS)
    )
    found = PersonMap(
        person=person,
        groups=sorted(shown),
        platform_admin=is_platform_admin(person),
        platform_admin_via=admin_via,
        memberships=memberships,
    )
    for membership in memberships:
        membership.approve_chain = why_may_approve(found, membership.tenant.slug)
    if found.platform_admin:
        found.admin_chain = why_may_approve(found, "")
    return found


def why_may_approve(person_access: PersonMap, tenant_slug: str) -> list[str]:
    """The chain that lets the person decide requests in a tenant, step by step; [] when
    nothing does."""
    person = person_access.person
    who = person.display_name
    if person_access.platform_admin:
        if person_access.platform_admin_via:
            via = ", ".join(person_access.platform_admin_via)
            steps = [
                f"{who} is in {via} at their last sign-in",
                f"BERTH_PLATFORM_ADMIN_GROUPS names {via}: {who} is a platform admin",
            ]
        else:
            steps = [f"{who} was made a platform admin by hand (Django admin or superuser)"]
        return [*steps, "platform admins decide any request in any tenant, never their own"]
    for membership in person_access.memberships:
        if membership.tenant.slug != tenant_slug or membership.role != Role.OWNER:
            continue
        rules = membership.access.approves_by
        if not rules:
            return []
        if membership.source == MembershipSource.OIDC:
            via = ", ".join(membership.via_groups)
            steps = [
                f"{who} is in {via} at their last sign-in",
                f"{tenant_slug} names {via} as an owner group: {who} is an owner",
            ]
        else:
            steps = [f"a platform admin made {who} an owner of {tenant_slug} by hand"]
        names = ", ".join(f"{rule.name} ({rule.condition})" for rule in rules)
        sends = (
            "the approval rule {} sends the requests it matches"
            if len(rules) == 1
            else "the approval rules {} send the requests they match"
        )
        return [
            *steps,
            sends.format(names) + " (when no earlier rule decides) to a tenant owner",
            "owners decide those requests, never their own",
        ]
    return []


def namespace_maps(viewer: User, name: str) -> list[NamespaceMap]:
    """Who may do what in the live namespaces of this name the viewer sees (one per
    cluster)."""
    namespaces = list(
        Namespace.objects.filter(
            name=name,
            state=NamespaceState.ACTIVE,
            tenant__in=_visible_tenants(viewer).values("pk"),
        )
        .select_related("tenant", "cluster", "tier")
        .order_by("cluster__name")
    )
    if not namespaces:
        raise Http404("No live namespace of this name among those you can see.")
    # Every live grant of these namespaces in one query, whatever their number.
    held: dict[int, list[AccessGrant]] = {}
    for grant in (
        AccessGrant.objects.live()
        .filter(namespace__in=namespaces)
        .select_related("person")
        .order_by("expires_at", "pk")
    ):
        held.setdefault(grant.namespace_id, []).append(grant)
    maps = []
    for namespace in namespaces:
        grants = [
            grant
            for grant in provisioner.access_grants(namespace.tenant)
            if grant.cluster == namespace.cluster.name and grant.namespace == name
        ]
        roles = {role: list(namespace.tenant.groups_for(role)) for role in ROLE_ORDER}
        maps.append(
            NamespaceMap(
                namespace=namespace,
                grants=grants,
                roles=roles,
                access_grants=held.get(namespace.pk, []),
            )
        )
    return maps


def search(viewer: User, query: str) -> SearchResults:
    """Groups, people and live namespaces whose names hold `query` (any case)."""
    query = query.strip()
    if not query:
        return SearchResults(query="", groups=[], people=[], namespaces=[])
    lowered = query.lower()
    groups = [group for group, _ in known_groups(viewer) if lowered in group.lower()]
    people = list(
        people_visible_to(viewer)
        .filter(
            Q(username__icontains=query)
            | Q(first_name__icontains=query)
            | Q(last_name__icontains=query)
            | Q(email__icontains=query)
        )
        .order_by("username")[:50]
    )
    namespaces = list(
        Namespace.objects.filter(
            name__icontains=query,
            state=NamespaceState.ACTIVE,
            tenant__in=_visible_tenants(viewer).values("pk"),
        )
        .select_related("tenant", "cluster")
        .order_by("name", "cluster__name")[:50]
    )
    return SearchResults(query=query, groups=groups, people=people, namespaces=namespaces)
