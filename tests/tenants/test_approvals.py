"""Approving binds to the plan the approver saw: the services refuse a digest that is no
longer the request's (PlanMoved) and record nothing, whoever calls them."""

import pytest

from tenants import services
from tenants.choices import RequestState
from tenants.errors import NotAllowed, PlanMoved
from tenants.models import Approval, AuditEvent, Request
from tenants.selectors import request_actions, review
from tests.support.workflow import ask_for_namespace

STALE = "0" * 64


def submit(demo_world, app: str) -> Request:
    """A prod namespace: the default policy has a platform admin decide it."""
    return ask_for_namespace(
        demo_world["tenant"], demo_world["developer"], app=app, tier="prod", cpu="1", memory="1Gi"
    )


def nothing_recorded(*requests: Request) -> bool:
    ids = [r.pk for r in requests]
    return (
        not Approval.objects.filter(request_id__in=ids).exists()
        and set(Request.objects.filter(pk__in=ids).values_list("state", flat=True))
        == {RequestState.SUBMITTED}
        and not AuditEvent.objects.filter(
            action__in=("request.approve", "request.approval_recorded")
        ).exists()
    )


def test_approving_a_stale_digest_raises_plan_moved_and_records_nothing(demo_world):
    shop = submit(demo_world, "shop")

    with pytest.raises(PlanMoved) as moved:
        services.approve_request(
            request_id=shop.pk, approver=demo_world["admin"], plan_digest=STALE
        )

    assert moved.value.request_ids == [shop.pk]
    assert moved.value.current_digest == review(shop).digest
    assert nothing_recorded(shop)


def test_approving_the_current_digest_approves(demo_world):
    shop = submit(demo_world, "shop")

    services.approve_request(
        request_id=shop.pk, approver=demo_world["admin"], plan_digest=review(shop).digest
    )

    assert Request.objects.get(pk=shop.pk).state == RequestState.APPROVED


def test_someone_without_the_right_is_refused_before_the_plan_is_compared(demo_world):
    shop = submit(demo_world, "shop")

    with pytest.raises(NotAllowed):
        services.approve_request(
            request_id=shop.pk, approver=demo_world["developer"], plan_digest=STALE
        )

    assert nothing_recorded(shop)


def test_approving_together_with_one_stale_digest_approves_none(demo_world):
    shop, cart, till = (
        submit(demo_world, "shop"),
        submit(demo_world, "cart"),
        submit(demo_world, "till"),
    )

    with pytest.raises(PlanMoved) as moved:
        services.approve_together(
            decisions=[
                (shop.pk, review(shop).digest),
                (cart.pk, STALE),
                (till.pk, STALE),
            ],
            approver=demo_world["admin"],
        )

    assert moved.value.request_ids == [cart.pk, till.pk]
    assert nothing_recorded(shop, cart, till)


@pytest.mark.parametrize("who", ["developer", "admin"])
def test_the_page_and_the_api_read_one_answer_to_what_a_person_may_do(client, demo_world, who):
    shop = submit(demo_world, "shop")
    person = demo_world[who]
    offered = request_actions(person, shop, plan_digest=review(shop).digest)

    client.force_login(person)
    body = client.get(f"/api/v1/requests/{shop.pk}/").json()
    page = client.get(f"/requests/{shop.pk}/").content.decode()

    assert body["permissions"] == offered.permissions
    assert ('id="approve-button"' in page) is offered.decide
    assert ("Cancel this request" in page) is offered.cancel
