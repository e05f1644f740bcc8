"""A newcomer's first hour with `make run`: the demo budget carries them through the README's
journey and more, refusals say what is in use and what only requested, environment names
are refused by the name the rule makes, in sentences."""

from __future__ import annotations

import pytest

from tenants import services
from tenants.choices import NamespaceState, RequestKind
from tenants.errors import InvalidInput
from tenants.models import Namespace, Project, Tenant, User
from tests.support.admin_forms import onboarding_form
from tests.support.workflow import ask_for_namespace, ask_for_project


def submit(demo_world, kind, *, requester=None, **payload):
    return services.submit_request(
        tenant=demo_world["tenant"],
        kind=kind,
        payload=payload,
        requester=requester or demo_world["developer"],
    )


def namespace(demo_world, *, requester=None, **payload):
    """A namespace request of payments on the sandbox cluster, by its developer unless told."""
    return ask_for_namespace(demo_world["tenant"], requester or demo_world["developer"], **payload)


def refusal(excinfo) -> dict[str, str]:
    return {
        field: " ".join(str(m) for m in messages)
        for field, messages in excinfo.value.field_errors.items()
    }


# --- the demo budget ---------------------------------------------------------------------


def test_the_demo_budget_carries_the_readme_journey_and_two_more_requests(demo_world):
    # The README's journey: a dev namespace as the form offers it, a three-tier project...
    namespace(demo_world, app="shop", tier="dev", cpu="1", memory="2Gi", storage="10Gi")
    ask_for_project(demo_world["tenant"], demo_world["owner"], app="checkout")
    # ... and two more, each as large as that project.
    for app in ("ledger", "refunds"):
        ask_for_project(demo_world["tenant"], demo_world["owner"], app=app, engine="argocd")

    assert (
        Namespace.objects.filter(tenant=demo_world["tenant"])
        .exclude(name__endswith="-kargo")
        .count()
        == 10
    )


def test_a_budget_refusal_tells_what_is_in_use_from_what_is_only_requested(demo_world):
    Tenant.objects.filter(pk=demo_world["tenant"].pk).update(budget_cpu_millis=8000)
    demo_world["tenant"].refresh_from_db()
    live = namespace(demo_world, app="shop", tier="dev", cpu="2", memory="2Gi")
    Namespace.objects.filter(request=live).update(state=NamespaceState.ACTIVE)
    namespace(
        demo_world, app="cart", tier="staging", requester=demo_world["owner"], cpu="6", memory="2Gi"
    )

    with pytest.raises(InvalidInput) as refused:
        namespace(demo_world, app="more", tier="dev", cpu="1", memory="2Gi")

    assert refusal(refused)["cpu"] == (
        "Asks for 1 core of CPU, but payments has 8 of its budget of 8 cores of CPU "
        "taken: 2 in use by "
        "its namespaces, 6 requested by requests not yet provisioned; 0 left."
    )


# --- environment names, by the name the rule makes -------------------------------------------


def rule(demo_world, template: str) -> None:
    services.replace_environment_rules(
        tenant=demo_world["tenant"],
        actor=demo_world["owner"],
        rules=[{"if": "", "namespace": template}],
    )


def start_environment(demo_world, **payload):
    Project.objects.get_or_create(
        tenant=demo_world["tenant"], name="checkout", defaults={"gitops_engine": "argocd_kargo"}
    )
    return submit(demo_world, RequestKind.EPHEMERAL, project="checkout", **payload)


def test_an_environment_slug_of_kargo_is_refused_naming_the_namespace_the_rule_makes(demo_world):
    rule(demo_world, "$TENANT-$ENV_SLUG")

    with pytest.raises(InvalidInput) as refused:
        start_environment(demo_world, env_slug="kargo")

    message = refusal(refused)["env_slug"]
    assert "payments-kargo" in message
    assert "payments-checkout-kargo" not in message
    assert message.startswith(
        "Rule 1 names the namespace payments-kargo, which an "
        "environment may not have: payments-kargo ends with -kargo"
    )


def test_an_environment_slug_of_kargo_in_a_shared_namespace_is_welcome(demo_world):
    rule(demo_world, "payments-previews")

    started = start_environment(demo_world, env_slug="kargo")

    assert started.payload["namespace"] == "payments-previews"


def test_a_rule_naming_the_tenants_own_namespace_is_refused_in_a_sentence(demo_world):
    rule(demo_world, "$TENANT-$BRANCH")

    with pytest.raises(InvalidInput) as refused:
        start_environment(demo_world, env_slug="review-1", branch="apps")

    assert refusal(refused)["env_slug"] == (
        "Rule 1 names the namespace payments-apps, which an environment may not have: "
        "payments-apps is the tenant's Argo CD applications namespace."
    )


def test_a_tier_slug_elsewhere_is_refused_naming_the_application_it_would_share(demo_world):
    rule(demo_world, "payments-previews")

    with pytest.raises(InvalidInput) as refused:
        start_environment(demo_world, env_slug="prod")

    assert refusal(refused)["env_slug"] == (
        "'prod' is reserved: it is a tier, and the environment's GitOps application would "
        "be named payments-checkout-prod, as the project's prod one is. Choose another "
        "environment slug."
    )


# --- a repository URL the tenant's engine cannot read, said before approval ------------------


@pytest.mark.parametrize(
    ("engine", "url", "said"),
    [
        (
            "flux",
            "file:///srv/git/search.git",
            [
                "Flux cannot read file:///srv/git/search.git: "
                "its GitRepository takes http://, https:// and "
                "ssh:// URLs only."
            ],
        ),
        ("flux", "git://git.example.com/search.git", ["Flux cannot read"]),
        ("flux", "git@git.example.com:search/deploy.git", []),  # Berth writes it as ssh://
        ("flux", "https://git.example.com/search.git", []),
        (
            "argocd",
            "file:///srv/git/payments.git",
            ["Argo CD cannot read file:///srv/git/payments.git: its repo-server reads"],
        ),
        ("argocd", "git@git.example.com:payments/deploy.git", []),
        (
            "argocd_kargo",
            "git.example.com:payments/deploy.git",
            [
                "Kargo cannot read git.example.com:payments/deploy.git: it takes git@host:path "
                "only "
                "with the user before @"
            ],
        ),
        ("argocd_kargo", "ssh://git@git.example.com/payments/deploy.git", []),
        ("argocd", "", []),
    ],
)
def test_which_engines_read_which_repository_urls(engine, url, said):
    from tenants.repository_readers import unreadable

    warnings = unreadable(engine, url)

    assert len(warnings) == len(said)
    for warning, start in zip(warnings, said, strict=True):
        assert warning.startswith(start)


def test_the_plan_preview_warns_before_approval_when_flux_cannot_read_the_url(client, demo_world):
    # A row saved before Flux's rule was checked on save, as the demo's once was.
    Tenant.objects.filter(slug="search").update(gitops_repo_url="file:///srv/git/search.git")
    search = Tenant.objects.get(slug="search")
    asked = ask_for_namespace(
        search, User.objects.get(username="sam"), app="index", tier="staging", cpu="1", memory="1Gi"
    )
    client.force_login(User.objects.get(username="pat"))

    page = client.get(f"/requests/{asked.pk}/").content.decode()

    assert asked.state == "submitted"
    assert (
        "Before approving:</strong> Flux cannot read file:///srv/git/search.git: its "
        "GitRepository takes http://, https:// and ssh:// URLs only."
    ) in page


def test_the_plan_preview_of_a_readable_url_warns_of_nothing(client, demo_world):
    asked = namespace(demo_world, app="shop", tier="staging", cpu="1", memory="1Gi")
    Tenant.objects.filter(slug="payments").update(
        gitops_repo_url="https://git.example.com/payments.git"
    )
    client.force_login(User.objects.get(username="pat"))

    page = client.get(f"/requests/{asked.pk}/").content.decode()

    assert "Before approving" not in page


def test_onboarding_warns_when_the_engine_cannot_read_the_url_and_keeps_the_tenant(
    client, demo_world
):
    client.force_login(User.objects.get(username="pat"))

    page = client.post(
        "/tenants/new/",
        onboarding_form(
            slug="ledger",
            name="Ledger team",
            owner_groups="ledger-owners",
            repo_url="file:///srv/git/ledger.git",
            engine="argocd_kargo",
        ),
        follow=True,
    ).content.decode()

    assert Tenant.objects.filter(slug="ledger").exists()
    assert "Tenant ledger is ready for requests." in page
    assert "Argo CD cannot read file:///srv/git/ledger.git" in page
    assert "Kargo cannot read file:///srv/git/ledger.git" in page
