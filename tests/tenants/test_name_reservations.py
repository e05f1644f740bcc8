"""The names Berth keeps for itself, and the plan's refusal to touch what belongs to
something else: a project's Kargo and tier namespaces, the tenant's Argo CD and Flux
namespaces, refused as environment slugs and in environment rules; a plan never applies
to or deletes a namespace registered for another purpose."""

from __future__ import annotations

from dataclasses import replace

import pytest

from provisioning.inputs import claims_of, plan_input_for
from provisioning.plan import ObjectRef, Plan, ref_of
from provisioning.reconcile import current_plan
from provisioning.validation import validate_plan
from tenants import services
from tenants.choices import NamePurpose, RequestKind
from tenants.errors import InvalidInput
from tenants.models import NamespaceClaim, Project
from tests.support.tenants_names import errors, kargo_project, live, small_namespace, submit


def one_rule(names_world, namespace: str) -> None:
    """The owner saves one environment rule: every environment in `namespace`."""
    services.replace_environment_rules(
        tenant=names_world["tenant"],
        actor=names_world["owner"],
        rules=[{"if": "", "namespace": namespace}],
    )


# --- the Kargo takeover, and its relatives ---------------------------------------------------


def test_an_environment_slug_of_kargo_is_refused_naming_the_kargo_namespace(names_world):
    kargo_project(names_world)
    with pytest.raises(InvalidInput) as refused:
        submit(names_world, RequestKind.EPHEMERAL, project="shop", env_slug="kargo")
    assert "'kargo' is reserved: payments-shop-kargo is the project's Kargo namespace" in errors(
        refused.value
    )
    assert live("payments-shop-kargo").purpose == NamePurpose.KARGO


def test_an_environment_slug_of_a_tier_is_refused(names_world):
    kargo_project(names_world)
    with pytest.raises(InvalidInput) as refused:
        submit(names_world, RequestKind.EPHEMERAL, project="shop", env_slug="prod")
    assert "payments-shop-prod is the project's prod namespace" in errors(refused.value)


@pytest.mark.parametrize(
    ("template", "why"),
    [
        ("payments-shop-kargo", "ends with -kargo"),
        ("$TENANT-$PROJECT-kargo", "ends with -kargo"),
        ("payments-apps", "the tenant's Argo CD applications namespace"),
        ("$TENANT-gitops", "the tenant's Flux GitOps namespace"),
        ("kube-system", "reserved"),
    ],
)
def test_environment_rules_may_not_name_berths_own_names(names_world, template, why):
    with pytest.raises(InvalidInput) as refused:
        one_rule(names_world, template)
    assert "Rule 1:" in errors(refused.value)
    assert why in errors(refused.value)


def test_a_rule_may_not_share_a_projects_tier_namespace(names_world):
    kargo_project(names_world)
    with pytest.raises(InvalidInput) as refused:
        one_rule(names_world, "payments-shop-dev")
    assert "payments-shop-dev is kept for the dev namespace of shop" in errors(refused.value)


def test_a_rule_evaluating_to_a_registered_name_is_refused_at_submission(names_world):
    kargo_project(names_world)
    # A template that only the branch makes dangerous: saved, then refused when it names
    # the project's Kargo namespace.
    one_rule(names_world, "$TENANT-$PROJECT-$BRANCH")
    with pytest.raises(InvalidInput) as refused:
        submit(
            names_world, RequestKind.EPHEMERAL, project="shop", env_slug="review-1", branch="kargo"
        )
    assert "ends with -kargo" in errors(refused.value)
    with pytest.raises(InvalidInput) as refused:
        submit(
            names_world, RequestKind.EPHEMERAL, project="shop", env_slug="review-2", branch="dev"
        )
    assert "payments-shop-dev is kept for the dev namespace of shop" in errors(refused.value)


def test_a_shared_rule_namespace_held_for_another_purpose_is_refused(names_world):
    Project.objects.create(tenant=names_world["tenant"], name="shop")
    NamespaceClaim.objects.create(
        cluster=names_world["cluster"],
        name="payments-review",
        purpose=NamePurpose.TIER,
        tenant=names_world["tenant"],
        app="review",
        tier="dev",
    )
    with pytest.raises(InvalidInput) as refused:
        one_rule(names_world, "payments-review")
    assert "payments-review on sandbox is the dev namespace of review" in errors(refused.value)


# --- the plan touches only what is claimed for it --------------------------------------------


def test_the_plan_refuses_a_namespace_registered_for_another_purpose(names_world):
    created = kargo_project(names_world)
    inputs = plan_input_for(created)
    assert validate_plan(current_plan(created), inputs) == {}
    # As if the project's dev namespace were registered for something else meanwhile.
    NamespaceClaim.objects.filter(name="payments-shop-dev").update(purpose=NamePurpose.KARGO)
    problems = validate_plan(current_plan(created), plan_input_for(created))
    assert any(
        "payments-shop-dev is registered as kargo" in problem
        for found in problems.values()
        for problem in found
    )


def test_a_plan_never_deletes_a_namespace_registered_for_something_else(names_world):
    """The end of the Kargo takeover: whatever names it, a plan may delete only the
    tenant's own tier, environment or shared namespaces, never the Kargo namespace."""
    inputs = replace(
        plan_input_for(kargo_project(names_world)),
        namespaces=(),
        remove_namespaces=("payments-shop-kargo",),
    )
    plan = Plan(delete=(ObjectRef("v1", "Namespace", "payments-shop-kargo"),))
    problems = validate_plan(
        plan, replace(inputs, claims=claims_of(inputs, names_world["cluster"]))
    )
    assert "registered as kargo of payments" in " ".join(problems["Namespace/payments-shop-kargo"])


def test_a_plan_listing_an_object_twice_is_refused_naming_it(names_world):
    created = small_namespace(names_world, app="x", tier="prod")
    plan = current_plan(created)
    doubled = Plan(apply=plan.apply + plan.apply[:1], delete=plan.delete)
    problems = validate_plan(doubled, plan_input_for(created))
    assert problems == {
        str(ref_of(plan.apply[0])): ["listed twice in the plan: a plan applies each object once"]
    }
