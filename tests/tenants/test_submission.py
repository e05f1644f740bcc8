"""Submitting a request: validation shared by forms and API, names, budgets — and bad input
saves nothing."""

import pytest

from tenants import services
from tenants.choices import NamespaceState, RequestState
from tenants.errors import InvalidInput, NotAllowed
from tenants.models import Namespace, Request, Tenant
from tests.support.factories import UserFactory
from tests.support.workflow import ask_for_namespace


@pytest.fixture
def world(demo_world):
    """The demo world of tests/conftest.py."""
    return demo_world


def submit(world, **payload):
    return ask_for_namespace(
        world["tenant"], world["developer"], **({"app": "shop", "tier": "prod"} | payload)
    )


def errors_of(excinfo) -> dict:
    return {
        key: " ".join(str(m) for m in value) for key, value in excinfo.value.field_errors.items()
    }


def test_a_submitted_request_claims_its_namespace_name(world):
    tenancy_request = submit(world)
    claim = Namespace.objects.get(name="payments-shop-prod")
    assert claim.state == NamespaceState.REQUESTED
    assert claim.request == tenancy_request


def test_duplicate_of_a_pending_request_is_refused_naming_it(world):
    first = submit(world)
    with pytest.raises(InvalidInput) as refused:
        submit(world)
    assert f"already requested (request #{first.pk})" in errors_of(refused)["app"]
    assert Request.objects.count() == 1


def test_duplicate_of_an_existing_namespace_is_refused(world):
    submit(world)
    Namespace.objects.filter(name="payments-shop-prod").update(state=NamespaceState.ACTIVE)
    with pytest.raises(InvalidInput) as refused:
        submit(world)
    assert "already exists on sandbox" in errors_of(refused)["app"]


def test_rejection_frees_the_name(world):
    first = submit(world)
    services.reject_request(request_id=first.pk, approver=world["admin"], reason="use dev")
    assert not Namespace.objects.filter(name="payments-shop-prod").exists()
    assert submit(world).state == RequestState.SUBMITTED


def test_cancellation_frees_the_name(world):
    first = submit(world)
    services.cancel_request(request_id=first.pk, actor=world["developer"])
    assert not Namespace.objects.exists()


def test_reserved_names_are_refused_with_the_reason(world):
    tenant = world["tenant"]
    Tenant.objects.filter(pk=tenant.pk).update(slug="kube")  # as if onboarded before the rule
    world["tenant"].refresh_from_db()
    with pytest.raises(InvalidInput) as refused:
        submit(world)
    assert "reserved" in errors_of(refused)["app"]


def test_quota_beyond_the_tier_maximum_is_refused_with_numbers(world):
    with pytest.raises(InvalidInput) as refused:
        submit(world, tier="dev", cpu="6")
    assert errors_of(refused)["cpu"] == "6 is more than the dev tier allows (4)."
    assert not Request.objects.exists() and not Namespace.objects.exists()


def test_quota_beyond_the_remaining_budget_is_refused_with_numbers(world):
    Tenant.objects.filter(pk=world["tenant"].pk).update(budget_cpu_millis=3000)
    world["tenant"].refresh_from_db()
    submit(world, app="one", cpu="2")
    with pytest.raises(InvalidInput) as refused:
        submit(world, app="two", cpu="1500m")
    assert errors_of(refused)["cpu"] == (
        "Asks for 1.5 cores of CPU, but payments has 2 of its budget of 3 cores of CPU "
        "taken: 0 in use by "
        "its namespaces, 2 requested by requests not yet provisioned; 1 left."
    )


def test_namespace_count_budget_counts_pending_requests(world):
    Tenant.objects.filter(pk=world["tenant"].pk).update(budget_namespaces=1)
    world["tenant"].refresh_from_db()
    submit(world, app="one")
    with pytest.raises(InvalidInput) as refused:
        submit(world, app="two")
    assert "namespaces" in errors_of(refused)


def test_someone_outside_the_tenant_cannot_request(world):
    with pytest.raises(NotAllowed, match="not a member"):
        ask_for_namespace(
            world["tenant"], UserFactory(username="x"), app="shop", cpu="1", memory="1Gi"
        )


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("app", "Shop_App", "lower-case"),
        ("app", "a" * 64, "no more than 63"),
        ("cpu", "lots", "not a Kubernetes quantity"),
        ("memory", "-1Gi", "negative"),
        ("tier", "gold", "not open to this tenant"),
        ("cluster", "elsewhere", "not open to this tenant"),
    ],
)
def test_bad_fields_get_clear_errors_and_save_nothing(world, field, value, message):
    with pytest.raises(InvalidInput) as refused:
        submit(world, **{field: value})
    assert message in errors_of(refused)[field]
    assert not Request.objects.exists() and not Namespace.objects.exists()


def test_a_second_decommission_of_the_same_namespace_is_refused_naming_the_first(world):
    submit(world)
    Namespace.objects.filter(name="payments-shop-prod").update(state=NamespaceState.ACTIVE)

    def decommission():
        return services.submit_request(
            tenant=world["tenant"],
            kind="decommission",
            requester=world["developer"],
            payload={"namespace": "payments-shop-prod", "reason": "shop closed"},
        )

    first = decommission()
    with pytest.raises(InvalidInput) as refused:
        decommission()
    assert f"already asked for in request #{first.pk}" in errors_of(refused)["namespace"]
    assert Request.objects.filter(kind="decommission").count() == 1
    assert first.state == RequestState.SUBMITTED  # the demo rules ask a person
    services.cancel_request(request_id=first.pk, actor=world["developer"])
    assert decommission().pk != first.pk  # once the first is closed, asking again works
