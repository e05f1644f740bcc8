"""Services refuse input with the domain's own error, field by field, and change nothing;
the API turns it into the same 400 validation problem DRF's errors make."""

import pytest

from tenants.api.exceptions import problem_handler
from tenants.errors import DomainError, InvalidInput
from tenants.kinds import validate_payload
from tenants.models import (
    AuditEvent,
    Namespace,
    NamespaceClaim,
    Request,
    Tenant,
)
from tests.support.workflow import ask_for_namespace


@pytest.fixture
def seeded(demo_world):
    """The demo world of tests/conftest.py."""
    return demo_world


def ask(seeded, **payload):
    return ask_for_namespace(
        seeded["tenant"], seeded["developer"], **({"app": "shop", "tier": "prod"} | payload)
    )


def counts() -> tuple[int, ...]:
    return tuple(
        model.objects.count() for model in (Request, Namespace, NamespaceClaim, AuditEvent)
    )


def test_a_refused_payload_raises_invalid_input_by_field_and_changes_nothing(seeded):
    before = counts()
    with pytest.raises(InvalidInput) as refused:
        ask(seeded, app="Not A Name", cpu="lots")
    assert set(refused.value.field_errors) == {"app", "cpu"}
    assert all(type(m) is str for m in refused.value.field_errors["app"])
    assert counts() == before


def test_an_exhausted_budget_is_refused_on_its_dimension_and_changes_nothing(seeded):
    Tenant.objects.filter(pk=seeded["tenant"].pk).update(budget_cpu_millis=400)
    seeded["tenant"].refresh_from_db()
    before = counts()
    with pytest.raises(InvalidInput) as refused:
        ask(seeded)
    assert list(refused.value.field_errors) == ["cpu"]
    assert counts() == before


def test_the_payload_schema_errors_stop_at_validate_payload(seeded):
    with pytest.raises(InvalidInput) as refused:
        validate_payload(
            kind="project",
            tenant=seeded["tenant"],
            payload={"app": "shop", "engine": "argocd", "cluster": "sandbox", "tiers": ["ok", "!"]},
        )
    assert "tiers.1" in refused.value.field_errors
    with pytest.raises(InvalidInput) as unknown:
        validate_payload(kind="gold", tenant=seeded["tenant"], payload={})
    assert unknown.value.field_errors == {"kind": ["Unknown request kind 'gold'."]}


def test_invalid_input_is_a_domain_error_in_plain_words():
    refused = InvalidInput.of({"slug": "Taken.", "tiers": ["Too many.", "Unknown."]})
    assert isinstance(refused, DomainError)
    assert refused.field_errors == {"slug": ["Taken."], "tiers": ["Too many.", "Unknown."]}
    assert str(refused) == "Taken. Too many. Unknown."
    assert InvalidInput.of("Nothing to change.").messages == ["Nothing to change."]


def test_errors_of_a_field_s_parts_are_named_by_their_path():
    assert InvalidInput.of({"app": "Bad."}).under("payload").field_errors == {
        "payload.app": ["Bad."]
    }
    assert InvalidInput.of("Bad.").under("payload").field_errors == {"payload": ["Bad."]}


@pytest.mark.parametrize(
    ("exc", "errors", "detail"),
    [
        (InvalidInput.of({"slug": "Taken."}), {"slug": ["Taken."]}, "Invalid fields: slug."),
        (InvalidInput.of("Nothing."), {"non_field_errors": ["Nothing."]}, "Nothing."),
    ],
)
def test_the_api_answers_invalid_input_as_a_validation_problem(rf, exc, errors, detail):
    response = problem_handler(exc, {"request": rf.post("/api/v1/x/"), "view": None})
    assert response.status_code == 400
    assert response.data["type"] == "/api/problems/validation-error"
    assert response.data["title"] == "Your request is not valid."
    assert response.data["errors"] == errors
    assert response.data["detail"] == detail
