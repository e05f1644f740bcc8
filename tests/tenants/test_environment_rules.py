"""Environment rules saved by a tenant's owners, and the validation of ephemeral requests:
which namespace an environment gets, what is refused and why, budgets, and who may end or
extend one. The rules' evaluation on its own is in test_environment_rule_choice.py."""

from __future__ import annotations

from datetime import timedelta

import pytest

from tenants import services
from tenants.choices import EndCause, EnvironmentState, NamespaceState, RequestState
from tenants.errors import DomainError, InvalidInput, NotAllowed
from tenants.models import AuditEvent, EphemeralEnvironment, Namespace, Project
from tests.support.factories import UserFactory
from tests.support.workflow import ask_for_environment

# --- saving rules and requesting environments ------------------------------------------------


@pytest.fixture
def rules_world(db):
    from tenants import demo
    from tenants.models import Tenant, User

    demo.seed(sandbox_api_url="http://127.0.0.1:1")
    tenant = Tenant.objects.get(slug="payments")
    Project.objects.create(tenant=tenant, name="shop")
    return {
        "tenant": tenant,
        "owner": User.objects.get(username="olivia"),
        "developer": User.objects.get(username="dev"),
        "outsider": User.objects.get(username="sam"),
    }


def ephemeral(rules_world, *, project="shop", env_slug="review-1", **payload):
    return ask_for_environment(
        rules_world["tenant"],
        rules_world["developer"],
        project=project,
        env_slug=env_slug,
        **payload,
    )


def test_rules_are_saved_in_order_by_owners_and_audited(rules_world):
    saved = services.replace_environment_rules(
        tenant=rules_world["tenant"],
        actor=rules_world["owner"],
        rules=[
            {"if": 'env_slug.startsWith("review")', "namespace": "payments-review-apps"},
            {"namespace": "$TENANT-$PROJECT-$ENV_SLUG"},
        ],
    )
    assert [r.position for r in saved] == [1, 2]
    event = AuditEvent.objects.get(action="tenant.environment_rules")
    assert event.actor_label == "olivia"
    assert event.after["rules"][0]["namespace"] == "payments-review-apps"


def test_one_bad_rule_saves_none_and_names_its_number(rules_world):
    services.replace_environment_rules(
        tenant=rules_world["tenant"],
        actor=rules_world["owner"],
        rules=[{"namespace": "$TENANT-$ENV_SLUG"}],
    )
    with pytest.raises(InvalidInput) as caught:
        services.replace_environment_rules(
            tenant=rules_world["tenant"],
            actor=rules_world["owner"],
            rules=[{"namespace": "payments-ok"}, {"if": "branch ==", "namespace": "$TENANT-x"}],
        )
    assert str(caught.value.field_errors["rules"][0]).startswith("Rule 2: The if condition")
    assert list(
        rules_world["tenant"].environment_rules.values_list("namespace_template", flat=True)
    ) == ["$TENANT-$ENV_SLUG"]


def test_members_cannot_change_where_environments_go(rules_world):
    with pytest.raises(NotAllowed):
        services.replace_environment_rules(
            tenant=rules_world["tenant"], actor=rules_world["developer"], rules=[]
        )


def test_an_ephemeral_request_within_budget_is_approved_with_its_expiry(rules_world):
    created = ephemeral(rules_world, ttl="3h", branch="feature/x", mr_id="7")
    assert created.state == RequestState.APPROVED
    assert created.policy_rule == "ephemeral-environments-auto-approve"
    environment = EphemeralEnvironment.objects.get(request=created)
    assert environment.namespace.name == "payments-shop-review-1"
    assert environment.namespace.state == NamespaceState.REQUESTED
    assert environment.expires_at - environment.created_at == pytest.approx(
        timedelta(hours=3), abs=timedelta(seconds=5)
    )
    # The review tier's maximum TTL bounds every extension.
    assert environment.max_expires_at - environment.created_at == pytest.approx(
        timedelta(days=14), abs=timedelta(seconds=5)
    )


@pytest.mark.parametrize(
    ("payload", "field", "expected"),
    [
        ({"project": "nope"}, "project", "is not a project of this tenant"),
        ({"env_slug": "Review_1"}, "env_slug", ""),
        ({"ttl": "15d"}, "ttl", "longer than the review tier allows (14d)"),
        ({"ttl": "soon"}, "ttl", "is not a duration"),
        ({"ttl": "30s"}, "ttl", "at least 1 minute"),
        ({"tier": "dev"}, "tier", "is not ephemeral"),
        ({"mr_id": "abc"}, "mr_id", "is a number"),
        ({"cpu": "5"}, "cpu", "more than the review tier allows"),
    ],
)
def test_bad_ephemeral_input_is_refused_by_field_and_saves_nothing(
    rules_world, payload, field, expected
):
    with pytest.raises(InvalidInput) as caught:
        ephemeral(rules_world, **payload)
    assert field in caught.value.field_errors
    assert expected in str(caught.value.field_errors[field])
    assert not EphemeralEnvironment.objects.exists()
    assert not Namespace.objects.exists()


def test_the_same_environment_twice_is_refused_until_the_first_ends(rules_world):
    ephemeral(rules_world)
    with pytest.raises(InvalidInput) as caught:
        ephemeral(rules_world)
    assert "already has an environment review-1" in str(caught.value.field_errors["env_slug"])


def test_an_environment_beyond_the_budget_is_refused_with_the_numbers(rules_world):
    tenant = rules_world["tenant"]
    tenant.budget_cpu_millis = 800
    tenant.save()
    ephemeral(rules_world, env_slug="review-1", cpu="500m")
    with pytest.raises(InvalidInput) as caught:
        ephemeral(rules_world, env_slug="review-2", cpu="500m")
    assert str(caught.value.field_errors["cpu"][0]) == (
        "Asks for 500m (0.5 cores) of CPU, but payments has 0.5 of its budget of 0.8 cores of "
        "CPU taken: 0 in use "
        "by its namespaces, 0.5 requested by requests not yet provisioned; 0.3 left."
    )


def test_a_refusing_rule_refuses_the_request(rules_world):
    services.replace_environment_rules(
        tenant=rules_world["tenant"],
        actor=rules_world["owner"],
        rules=[
            {"if": 'branch == "main"', "refuse": True, "message": "Not from main."},
            {"namespace": "$TENANT-$PROJECT-$ENV_SLUG"},
        ],
    )
    with pytest.raises(InvalidInput) as caught:
        ephemeral(rules_world, branch="main")
    assert str(caught.value.field_errors["env_slug"][0]) == "Not from main."


def test_ending_one_not_yet_decided_cancels_it_and_frees_its_name(rules_world, settings):
    from tenants.models import ApprovalRule

    ApprovalRule.objects.filter(name="ephemeral-environments-auto-approve").update(enabled=False)
    ApprovalRule.objects.filter(name="dev-and-review-auto-approve").update(enabled=False)
    created = ephemeral(rules_world)
    assert created.state == RequestState.SUBMITTED
    environment = EphemeralEnvironment.objects.get(request=created)
    assert (
        services.end_environment(
            environment_id=environment.pk, actor=rules_world["developer"], cause=EndCause.STOPPED
        )
        is None
    )
    environment.refresh_from_db()
    created.refresh_from_db()
    assert environment.state == EnvironmentState.ENDED
    assert created.state == RequestState.CANCELLED
    assert (
        not Namespace.objects.filter(name="payments-shop-review-1")
        .exclude(state=NamespaceState.DECOMMISSIONED)
        .exists()
    )
    ephemeral(rules_world)  # the name is free again


def test_outsiders_can_neither_end_nor_extend(rules_world):
    environment = EphemeralEnvironment.objects.get(request=ephemeral(rules_world))
    EphemeralEnvironment.objects.filter(pk=environment.pk).update(state=EnvironmentState.LIVE)
    with pytest.raises(NotAllowed):
        services.end_environment(
            environment_id=environment.pk,
            actor=rules_world["outsider"],
            cause=EndCause.ENDED_BY_USER,
        )
    with pytest.raises(NotAllowed):
        services.extend_environment(
            environment_id=environment.pk, actor=rules_world["outsider"], ttl_seconds=3600
        )
    stranger = UserFactory()
    with pytest.raises(NotAllowed):
        services.extend_environment(environment_id=environment.pk, actor=stranger, ttl_seconds=3600)


def test_ending_twice_is_refused(rules_world):
    environment = EphemeralEnvironment.objects.get(request=ephemeral(rules_world))
    EphemeralEnvironment.objects.filter(pk=environment.pk).update(state=EnvironmentState.LIVE)
    services.end_environment(
        environment_id=environment.pk, actor=rules_world["developer"], cause=EndCause.ENDED_BY_USER
    )
    with pytest.raises(DomainError):
        services.end_environment(
            environment_id=environment.pk,
            actor=rules_world["developer"],
            cause=EndCause.ENDED_BY_USER,
        )


def test_viewers_look_but_cannot_end_one(rules_world):
    from tenants.choices import Role
    from tenants.models import Membership

    environment = EphemeralEnvironment.objects.get(request=ephemeral(rules_world))
    EphemeralEnvironment.objects.filter(pk=environment.pk).update(state=EnvironmentState.LIVE)
    viewer = UserFactory()
    Membership.objects.create(user=viewer, tenant=rules_world["tenant"], role=Role.VIEWER)
    with pytest.raises(NotAllowed):
        services.end_environment(
            environment_id=environment.pk, actor=viewer, cause=EndCause.ENDED_BY_USER
        )
    environment.refresh_from_db()
    assert environment.state == EnvironmentState.LIVE


def test_a_failed_environment_that_ended_is_not_provisioned_again_by_a_retry(rules_world):
    from tenants.models import User

    created = ephemeral(rules_world)
    run = services.start_provisioning(request_id=created.pk, plan_digest="x")
    services.mark_failed(run=run, error="the API server refused")
    environment = EphemeralEnvironment.objects.get(request=created)
    services.end_environment(environment_id=environment.pk, actor=None, cause=EndCause.EXPIRED)
    with pytest.raises(DomainError, match="has ended"):
        services.retry_request(
            request_id=created.pk, actor=User.objects.get(username="pat"), plan_digest="x"
        )


def test_an_end_request_cannot_be_submitted_as_a_plain_request(rules_world):
    environment = EphemeralEnvironment.objects.get(request=ephemeral(rules_world))
    EphemeralEnvironment.objects.filter(pk=environment.pk).update(state=EnvironmentState.LIVE)
    with pytest.raises(InvalidInput) as caught:
        services.submit_request(
            tenant=rules_world["tenant"],
            kind="end_environment",
            requester=rules_world["developer"],
            payload={"environment": environment.pk},
        )
    assert "environments/{id}/end/" in str(caught.value.field_errors["kind"][0])


def test_an_owners_request_scoped_token_replaces_the_rules_and_bad_ones_are_400(rules_world):
    from rest_framework.test import APIClient

    token = services.create_api_token(
        user=rules_world["owner"], name="rules", scopes=["read", "request"]
    )[1]
    api = APIClient(HTTP_AUTHORIZATION=f"Bearer {token}")
    url = "/api/v1/tenants/payments/environment-rules/"
    bad = api.put(
        url,
        {
            "rules": [
                {"if": 'env_slug.startsWith("review"', "namespace": "payments-review-apps"},
                {"namespace": "search-$ENV_SLUG"},
            ]
        },
        format="json",
    )
    assert bad.status_code == 400
    problems = bad.json()["errors"]["rules"]
    assert problems[0].startswith("Rule 1: The if condition does not compile")
    assert problems[1].startswith("Rule 2: ") and "outside the tenant's prefix" in problems[1]
    good = api.put(
        url,
        {"rules": [{"if": 'env_slug.startsWith("review")', "namespace": "payments-review-apps"}]},
        format="json",
    )
    assert good.status_code == 200
    assert api.get(url).json() == {
        "rules": [
            {
                "if": 'env_slug.startsWith("review")',
                "namespace": "payments-review-apps",
                "refuse": False,
                "message": "",
            }
        ]
    }
    read_only = services.create_api_token(user=rules_world["owner"], name="ro", scopes=["read"])[1]
    refused = APIClient(HTTP_AUTHORIZATION=f"Bearer {read_only}").put(
        url, {"rules": []}, format="json"
    )
    assert refused.status_code == 403


def test_a_list_of_rules_longer_than_anyone_needs_is_refused(rules_world):
    with pytest.raises(InvalidInput) as caught:
        services.replace_environment_rules(
            tenant=rules_world["tenant"],
            actor=rules_world["owner"],
            rules=[
                {"namespace": f"payments-n{n}"} for n in range(services.MAX_ENVIRONMENT_RULES + 1)
            ],
        )
    assert "At most 50 rules" in str(caught.value.field_errors["rules"][0])
    assert not rules_world["tenant"].environment_rules.exists()
