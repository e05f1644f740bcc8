"""The access map, end to end: what a group, a person or a namespace comes down to, computed
from the plans that provision, matches what the stand-in holds after provisioning them.

Three projects of the demo tenant `payments` are provisioned on the Kubernetes API stand-in
(Argo CD, Argo CD + Kargo, Flux) with its repository on the git server; then each group's
map is checked against the RoleBindings, the AppProject and the Kargo ServiceAccounts the
stand-in answers with over its API.
"""

from __future__ import annotations

import json

from tenants import selectors
from tenants.choices import MembershipSource
from tenants.models import ApprovalRule, Membership, Tenant, User
from tenants.provisioner import ARGOCD, FLUX, KARGO, KUBERNETES
from tests.support.cluster import as_admin

GROUPS = ("payments-owners", "payments-devs", "payments-auditors")


def live_bindings(sandbox) -> dict[str, set[tuple[str, str, str]]]:
    """group -> {(namespace, RoleBinding, role)} as the stand-in answers over its API."""
    found: dict[str, set[tuple[str, str, str]]] = {}
    listed = as_admin(sandbox, "GET", "/apis/rbac.authorization.k8s.io/v1/rolebindings")
    for binding in listed["items"]:
        for subject in binding.get("subjects") or []:
            if subject["kind"] == "Group":
                found.setdefault(subject["name"], set()).add(
                    (
                        binding["metadata"]["namespace"],
                        binding["metadata"]["name"],
                        binding["roleRef"]["name"],
                    )
                )
    return found


def test_each_groups_map_matches_the_rolebindings_on_the_cluster(provisioned, sandbox):
    on_cluster = live_bindings(sandbox)
    admin = provisioned["admin"]
    for group in GROUPS:
        [access] = selectors.group_map(admin, group).tenants
        mapped = {(g.namespace, g.obj.split("/")[-1], g.role) for g in access.grants_in(KUBERNETES)}
        assert mapped, group
        assert mapped == on_cluster[group], group
        assert {g.cluster for g in access.grants} == {"sandbox"}
    # The namespaces of all three projects, the dev tier of each and cart's staging.
    namespaces = {
        g.namespace
        for g in selectors.group_map(admin, "payments-devs").tenants[0].grants_in(KUBERNETES)
    }
    assert {
        "payments-shop-dev",
        "payments-cart-dev",
        "payments-cart-staging",
        "payments-feed-dev",
    } <= namespaces


def test_argo_cd_and_kargo_roles_are_those_on_the_cluster(provisioned, sandbox):
    admin = provisioned["admin"]
    project = as_admin(
        sandbox, "GET", "/apis/argoproj.io/v1alpha1/namespaces/argocd/appprojects/payments"
    )
    live_roles = {
        (group, role["name"]) for role in project["spec"]["roles"] for group in role["groups"]
    }
    kargo_accounts = {}
    for account in as_admin(sandbox, "GET", "/api/v1/serviceaccounts")["items"]:
        claims = (account["metadata"].get("annotations") or {}).get("rbac.kargo.akuity.io/claims")
        if claims:
            for group in json.loads(claims)["groups"]:
                kargo_accounts.setdefault(group, set()).add(
                    (account["metadata"]["namespace"], account["metadata"]["name"])
                )
    for group in GROUPS:
        [access] = selectors.group_map(admin, group).tenants
        assert {(g.group, g.tenant_role) for g in access.grants_in(ARGOCD)} == {
            pair for pair in live_roles if pair[0] == group
        }
        assert {(g.namespace, g.role) for g in access.grants_in(KARGO)} == kargo_accounts[group]

    [devs] = selectors.group_map(admin, "payments-devs").tenants
    [argocd] = devs.grants_in(ARGOCD)
    assert argocd.summary == (
        "Argo CD: get, sync, action/* on the tenant's Applications (payments/*)"
    )
    [kargo] = devs.grants_in(KARGO)
    assert kargo.summary == (
        "Kargo: see the Kargo project payments-cart-kargo; promote into dev, staging"
    )
    [auditors] = selectors.group_map(admin, "payments-auditors").tenants
    assert [g.summary for g in auditors.grants_in(KARGO)] == [
        "Kargo: see the Kargo project payments-cart-kargo"
    ]


def test_what_the_tenants_files_may_do_is_the_flux_reconcilers_bindings(provisioned, sandbox):
    [access] = selectors.group_map(provisioned["admin"], "payments-devs").tenants
    flux = {(g.namespace, g.role) for g in access.identities if g.system == FLUX}
    listed = as_admin(sandbox, "GET", "/apis/rbac.authorization.k8s.io/v1/rolebindings")
    live = {
        (b["metadata"]["namespace"], b["roleRef"]["name"])
        for b in listed["items"]
        if any(
            s["kind"] == "ServiceAccount" and s["name"] == "berth-reconciler"
            for s in b.get("subjects") or []
        )
    }
    assert flux == live
    assert ("payments-feed-dev", "berth-tenant-edit") in flux
    assert {g.identity for g in access.identities if g.system == FLUX} == {
        "ServiceAccount payments-gitops/berth-reconciler"
    }


def test_berth_rights_and_the_chain_of_an_owners_approval(provisioned, settings):
    settings.BERTH_PLATFORM_ADMIN_GROUPS = ["platform-admins"]
    admin = provisioned["admin"]
    [owners] = selectors.group_map(admin, "payments-owners").tenants
    # The default rules send staging and access to a tenant's namespaces to a tenant owner,
    # prod to a platform admin.
    assert [rule.name for rule in owners.approves_by] == [
        "access-needs-tenant-owner",
        "staging-needs-tenant-owner",
    ]
    assert "read the tenant's audit log" in owners.berth
    [devs] = selectors.group_map(admin, "payments-devs").tenants
    assert devs.approves_by == [] and "submit requests" in devs.berth

    olivia = selectors.person_map(admin, "olivia")
    [membership] = olivia.memberships
    assert membership.via_groups == ["payments-owners"]
    assert membership.approve_chain == [
        "Olivia Owner is in payments-owners at their last sign-in",
        "payments names payments-owners as an owner group: Olivia Owner is an owner",
        'the approval rules access-needs-tenant-owner (request.kind == "access"), '
        'staging-needs-tenant-owner ("staging" in request.tiers) send the requests they match '
        "(when no earlier rule decides) to a tenant owner",
        "owners decide those requests, never their own",
    ]
    ApprovalRule.objects.filter(
        name__in=["staging-needs-tenant-owner", "access-needs-tenant-owner"]
    ).update(enabled=False)
    assert selectors.person_map(admin, "olivia").memberships[0].approve_chain == []
    dana = selectors.person_map(admin, "dev")
    assert dana.memberships[0].approve_chain == []
    pat = selectors.person_map(admin, "pat")
    assert pat.admin_chain == [
        "Pat Platform is in platform-admins at their last sign-in",
        "BERTH_PLATFORM_ADMIN_GROUPS names platform-admins: Pat Platform is a platform admin",
        "platform admins decide any request in any tenant, never their own",
    ]
    settings.BERTH_PLATFORM_ADMIN_GROUPS = []
    assert selectors.person_map(admin, "pat").admin_chain[0] == (
        "Pat Platform was made a platform admin by hand (Django admin or superuser)"
    )


def test_a_manual_owner_gets_berths_rights_but_no_cluster_rights(provisioned):
    sam = User.objects.get(username="sam")  # in search-devs only
    Membership.objects.create(
        user=sam,
        tenant=Tenant.objects.get(slug="payments"),
        role="owner",
        source=MembershipSource.MANUAL,
    )
    person = selectors.person_map(provisioned["admin"], "sam")
    payments = next(m for m in person.memberships if m.tenant.slug == "payments")
    assert payments.source == MembershipSource.MANUAL and payments.via_groups == []
    assert "read the tenant's audit log" in payments.access.berth
    assert payments.access.grants == []  # RBAC binds groups; sam's group is search's


def test_the_namespace_map_lists_who_is_bound_there(provisioned, sandbox):
    [entry] = selectors.namespace_maps(provisioned["admin"], "payments-feed-dev")
    who = {(g.group or g.identity, g.role) for g in entry.grants}
    assert ("payments-devs", "berth-tenant-edit") in who
    assert ("payments-auditors", "berth-tenant-view") in who
    assert ("ServiceAccount payments-gitops/berth-reconciler", "berth-tenant-edit") in who
    listed = as_admin(
        sandbox,
        "GET",
        "/apis/rbac.authorization.k8s.io/v1/namespaces/payments-feed-dev/rolebindings",
    )
    live_groups = {
        (s["name"], b["roleRef"]["name"])
        for b in listed["items"]
        for s in b.get("subjects") or []
        if s["kind"] == "Group"
    }
    assert live_groups == {(g.group, g.role) for g in entry.grants if g.group}


# --- pages and API: the same map, only within the tenants the caller sees -----------------


def test_the_group_page_shows_each_binding_and_what_it_allows(provisioned, client):
    client.force_login(provisioned["admin"])
    page = client.get("/access/groups/payments-devs/")
    assert page.status_code == 200
    html = page.content.decode()
    for expected in (
        "RoleBinding payments-shop-dev/berth-members",
        "berth-tenant-edit",
        "proj:payments:member",
        "promote into dev, staging",
        "ServiceAccount payments-gitops/berth-reconciler",
        "submit requests",
    ):
        assert expected in html, expected
    person = client.get("/access/people/olivia/").content.decode()
    assert "staging-needs-tenant-owner" in person and "payments-owners" in person
    namespace = client.get("/access/namespaces/payments-cart-staging/").content.decode()
    assert "payments-auditors" in namespace and "berth-tenant-view" in namespace


def test_someone_of_another_tenant_sees_nothing_of_it(provisioned, client):
    sam = User.objects.get(username="sam")  # search-devs: the search tenant only
    client.force_login(sam)
    for path in (
        "/access/groups/payments-devs/",
        "/access/people/olivia/",
        "/access/namespaces/payments-shop-dev/",
    ):
        assert client.get(path).status_code == 404, path
    found = client.get("/access/?q=payments").content.decode()
    assert "Nothing you can see matches" in found
    assert "payments-devs" not in client.get("/access/").content.decode()


def test_a_member_searches_groups_people_and_namespaces_of_their_tenant(provisioned, client):
    client.force_login(User.objects.get(username="dev"))
    html = client.get("/access/?q=cart").content.decode()
    assert "/access/namespaces/payments-cart-dev/" in html
    html = client.get("/access/?q=oliv").content.decode()
    assert "/access/people/olivia/" in html
    html = client.get("/access/?q=DEVS").content.decode()
    assert "/access/groups/payments-devs/" in html and "search-devs" not in html


def test_the_api_answers_the_same_map(provisioned):
    from tests.support.api import api

    dana = User.objects.get(username="dev")
    body = api(dana, scopes=["read"]).get("/api/v1/access/groups/payments-devs/").json()
    [tenant] = body["tenants"]
    [access] = selectors.group_map(dana, "payments-devs").tenants
    assert {(g["system"], g["namespace"], g["object"], g["role"]) for g in tenant["grants"]} == {
        (g.system, g.namespace, g.obj, g.role) for g in access.grants
    }
    assert tenant["roles"] == ["member"] and "submit requests" in tenant["berth"]
    assert body["people"] == [{"username": "dev", "display_name": "Dana Developer"}]

    olivia = api(provisioned["admin"], scopes=["read"]).get("/api/v1/access/people/olivia/")
    [membership] = olivia.json()["memberships"]
    assert membership["approve_chain"][1] == (
        "payments names payments-owners as an owner group: Olivia Owner is an owner"
    )
    namespaces = (
        api(dana, scopes=["read"]).get("/api/v1/access/namespaces/payments-feed-dev/").json()
    )
    assert [entry["cluster"] for entry in namespaces] == ["sandbox"]
    found = api(dana, scopes=["read"]).get("/api/v1/access/?q=feed").json()
    assert found["namespaces"] == [
        {"name": "payments-feed-dev", "cluster": "sandbox", "tenant": "payments"}
    ]

    sam = User.objects.get(username="sam")
    for path in (
        "/api/v1/access/groups/payments-devs/",
        "/api/v1/access/people/olivia/",
        "/api/v1/access/namespaces/payments-feed-dev/",
    ):
        assert api(sam, scopes=["read"]).get(path).status_code == 404, path


def test_the_group_page_costs_the_same_queries_with_more_namespaces(
    provisioned, client, django_assert_max_num_queries
):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from tests.support.gitops_loop import project, work

    client.force_login(provisioned["admin"])
    with CaptureQueriesContext(connection) as before:
        assert client.get("/access/groups/payments-devs/").status_code == 200
    tenant = provisioned["tenant"]
    tenant.budget_cpu_millis, tenant.budget_memory_mib = 64000, 131072
    tenant.save(update_fields=["budget_cpu_millis", "budget_memory_mib"])
    project(provisioned, "blog", "argocd", "dev", "staging")  # three more namespaces
    project(provisioned, "news", "argocd", "dev")
    work()
    with django_assert_max_num_queries(len(before)):
        page = client.get("/access/groups/payments-devs/")
    assert "payments-blog-dev" in page.content.decode()


def test_the_api_search_wants_a_query_and_says_so(provisioned):
    from tests.support.api import api, assert_problem

    dana = api(User.objects.get(username="dev"), scopes=["read"])
    body = assert_problem(dana.get("/api/v1/access/"), 400)
    assert body["errors"] == {"q": ["This field is required."]}
    body = assert_problem(dana.get("/api/v1/access/", {"q": "x" * 201}), 400)
    assert body["errors"] == {"q": ["Ensure this field has no more than 200 characters."]}


def test_a_persons_groups_of_other_tenants_stay_hidden_from_members(provisioned):
    from tests.support.api import api

    User.objects.filter(username="dev").update(last_groups=["payments-devs", "search-devs"])
    olivia = User.objects.get(username="olivia")
    assert selectors.person_map(olivia, "dev").groups == ["payments-devs"]
    body = api(olivia, scopes=["read"]).get("/api/v1/access/people/dev/").json()
    assert body["groups"] == ["payments-devs"]
    assert selectors.person_map(provisioned["admin"], "dev").groups == [
        "payments-devs",
        "search-devs",
    ]
