"""Submitting a request: validation shared by forms and API, names, budgets — and bad input
saves nothing."""

import pytest

from tenants import services
from tenants.choices import NamespaceState, RequestState
from tenants.errors import InvalidInput, NotAllowed
from tenants.models import Namespace, Request, Tenant
from tests.support.factories import UserFactory
from tests.support.workflow import ask_for_namespace


def submit(demo_world, **payload):
    return ask_for_namespace(
        demo_world["tenant"], demo_world["developer"], **({"app": "shop", "tier": "prod"} | payload)
    )


def errors_of(excinfo) -> dict:
    return {
        key: " ".join(str(m) for m in value) for key, value in excinfo.value.field_errors.items()
    }


def test_a_submitted_request_claims_its_namespace_name(demo_world):
    tenancy_request = submit(demo_world)
    claim = Namespace.objects.get(name="payments-shop-prod")
    assert claim.state == NamespaceState.REQUESTED
    assert claim.request == tenancy_request


def test_duplicate_of_a_pending_request_is_refused_naming_it(demo_world):
    first = submit(demo_world)
    with pytest.raises(InvalidInput) as refused:
        submit(demo_world)
    assert f"already requested (request #{first.pk})" in errors_of(refused)["app"]
    assert Request.objects.count() == 1


def test_duplicate_of_an_existing_namespace_is_refused(demo_world):
    submit(demo_world)
    Namespace.objects.filter(name="payments-shop-prod").update(state=NamespaceState.ACTIVE)
    with pytest.raises(InvalidInput) as refused:
        submit(demo_world)
    assert "already exists on sandbox" in errors_of(refused)["app"]


def test_rejection_frees_the_name(demo_world):
    first = submit(demo_world)
    services.reject_request(request_id=first.pk, approver=demo_world["admin"], reason="use dev")
    assert not Namespace.objects.filter(name="payments-shop-prod").exists()
    assert submit(demo_world).state == RequestState.SUBMITTED


def test_cancellation_frees_the_name(demo_world):
    first = submit(demo_world)
    services.cancel_request(request_id=first.pk, actor=demo_world["developer"])
    assert not Namespace.objects.exists()


def test_reserved_names_are_refused_with_the_reason(demo_world):
    tenant = demo_world["tenant"]
    Tenant.objects.filter(pk=tenant.pk).update(slug="kube")  # as if onboarded before the rule
    demo_world["tenant"].refresh_from_db()
    with pytest.raises(InvalidInput) as refused:
        submit(demo_world)
    assert "reserved" in errors_of(refused)["app"]


def test_quota_beyond_the_tier_maximum_is_refused_with_numbers(demo_world):
    with pytest.raises(InvalidInput) as refused:
        submit(demo_world, tier="dev", cpu="6")
    assert errors_of(refused)["cpu"] == "6 is more than the dev tier allows (4)."
    assert not Request.objects.exists() and not Namespace.objects.exists()


def test_quota_beyond_the_remaining_budget_is_refused_with_numbers(demo_world):
    Tenant.objects.filter(pk=demo_world["tenant"].pk).update(budget_cpu_millis=3000)
    demo_world["tenant"].refresh_from_db()
    submit(demo_world, app="one", cpu="2")
    with pytest.raises(InvalidInput) as refused:
        submit(demo_world, app="two", cpu="1500m")
    assert errors_of(refused)["cpu"] == (
        "Asks for 1500m (1.5 cores) of CPU, but payments has 2 of its budget of 3 cores of CPU "
        "taken: 0 in use by "
        "its namespaces, 2 requested by requests not yet provisioned; 1 left."
    )


def test_namespace_count_budget_counts_pending_requests(demo_world):
    Tenant.objects.filter(pk=demo_world["tenant"].pk).update(budget_namespaces=1)
    demo_world["tenant"].refresh_from_db()
    submit(demo_world, app="one")
    with pytest.raises(InvalidInput) as refused:
        submit(demo_world, app="two")
    assert "namespaces" in errors_of(refused)


def test_someone_outside_the_tenant_cannot_request(demo_world):
    with pytest.raises(NotAllowed, match="not a member"):
        ask_for_namespace(
            demo_world["tenant"], UserFactory(username="x"), app="shop", cpu="1", memory="1Gi"
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
def test_bad_fields_get_clear_errors_and_save_nothing(demo_world, field, value, message):
    with pytest.raises(InvalidInput) as refused:
        submit(demo_world, **{field: value})
    assert message in errors_of(refused)[field]
    assert not Request.objects.exists() and not Namespace.objects.exists()


def test_a_second_decommission_of_the_same_namespace_is_refused_naming_the_first(demo_world):
    submit(demo_world)
    Namespace.objects.filter(name="payments-shop-prod").update(state=NamespaceState.ACTIVE)

    def decommission():
        return services.submit_request(
            tenant=demo_world["tenant"],
            kind="decommission",
            requester=demo_world["developer"],
            payload={"namespace": "payments-shop-prod", "reason": "shop closed"},
        )

    first = decommission()
    with pytest.raises(InvalidInput) as refused:
        decommission()
    assert f"already asked for in request #{first.pk}" in errors_of(refused)["namespace"]
    assert Request.objects.filter(kind="decommission").count() == 1
    assert first.state == RequestState.SUBMITTED  # the demo rules ask a person
    services.cancel_request(request_id=first.pk, actor=demo_world["developer"])
    assert decommission().pk != first.pk  # once the first is closed, asking again works
