"""`berth access` against a live Berth whose cluster is the stand-in and whose worker's jobs
run as they are queued (the `live` fixture): sam of search asks for member on payments'
dev namespace and waits while payments decides (approved: bound, exit 0 and how to use it;
rejected: exit 1 with the reason); the grants listed; revoked by whom may; the API's
refusals as its problem details by field."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys

import pytest

from tenants import services
from tenants.choices import ApproverRole, NamespaceState, PolicyOutcome
from tenants.models import AccessGrant, ApprovalRule, Namespace, Tenant, User
from tenants.selectors import review
from tests.support.berth_cli import ROOT, berth
from tests.support.watching import eventually
from tests.support.workflow import approve_if_needed, ask_for_namespace

# Each test here starts a program (python): make test-fast leaves them out.
pytestmark = pytest.mark.processes

NAMESPACE = "payments-shop-dev"
ASK = f"access request {NAMESPACE} member --for 1h --reason 'debug the search integration'"


def berth_as(live, person: str, command: str) -> subprocess.CompletedProcess:
    return berth(*shlex.split(command), token=live[person], url=live["url"], home=live["home"])


@pytest.fixture
def shop_dev(live) -> Namespace:
    """payments' dev namespace, provisioned on the stand-in; and a rule by which a tenant
    owner decides every request for access. (Said here: an earlier transactional test's
    flush may have removed the default approval rules, a data migration.)"""
    ApprovalRule.objects.update_or_create(
        name="access-needs-tenant-owner",
        defaults={
            "position": 0,
            "condition": 'request.kind == "access"',
            "outcome": PolicyOutcome.REQUIRE,
            "approver_role": ApproverRole.TENANT_OWNER,
        },
    )
    payments = Tenant.objects.get(slug="payments")
    asked = ask_for_namespace(payments, User.objects.get(username="dev"), app="shop")
    approve_if_needed(asked, approver=User.objects.get(username="pat"))
    return Namespace.objects.get(name=NAMESPACE, state=NamespaceState.ACTIVE)


def waiting(live, person: str, command: str) -> subprocess.Popen:
    """`berth <command>` started, not waited for: the test decides meanwhile."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("BERTH_", "DJANGO_"))}
    environment.update(
        BERTH_TOKEN=live[person],
        BERTH_URL=live["url"],
        XDG_CONFIG_HOME=str(live["home"] / "config"),
        XDG_CACHE_HOME=str(live["home"] / "cache"),
        NO_COLOR="1",
        COLUMNS="200",
    )
    return subprocess.Popen(
        [sys.executable, "-m", "berth_cli.main", *shlex.split(command)],
        cwd=ROOT,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def asked_grant() -> AccessGrant:
    return eventually(
        lambda: AccessGrant.objects.select_related("request").first(),
        "berth access request asked for something",
    )


def decided(decide) -> None:
    """A decision taken while the CLI's polls read the same database: SQLite's shared
    in-memory test database answers "table is locked" a moment (nothing is written then),
    so it is taken again (PostgreSQL never does)."""
    eventually(lambda: decide() or True, "the decision recorded")


def test_asked_waited_for_while_approved_then_listed_and_revoked(live, shop_dev):
    running = waiting(live, "sam", f"{ASK} --wait --interval 0.2 --timeout 120")
    grant = asked_grant()
    assert grant.state == "pending"  # payments' owner decides
    services.approve_request(
        request_id=grant.request_id,
        approver=User.objects.get(username="olivia"),
        plan_digest=review(grant.request).digest,
    )
    out, errors = running.communicate(timeout=120)

    assert running.returncode == 0, errors
    assert f"Access grant #{grant.pk}: member on {NAMESPACE} for 1h: pending" in out
    assert f"{live['url']}/requests/{grant.request_id}/" in out
    assert "pending → " in errors and "active" in errors
    assert f"berth kubeconfig {NAMESPACE} --credentials berth" in out
    grant.refresh_from_db()
    assert grant.state == "active"
    binding = live["sandbox"].get("RoleBinding", grant.binding_name, NAMESPACE)
    assert binding["subjects"][0]["name"] == "oidc:devidp-sam"

    table = berth_as(live, "olivia", "access list --state active")
    assert table.returncode == 0, table.stderr
    assert "until" in table.stdout and "sam" in table.stdout and NAMESPACE in table.stdout
    assert "debug the search integration" in table.stdout
    assert berth_as(live, "olivia", "access list --mine").stdout.count(NAMESPACE) == 0
    mine = json.loads(berth_as(live, "sam", "access list --mine -o json").stdout)
    assert [row["id"] for row in mine] == [grant.pk]

    refused = berth_as(live, "dev", f"access revoke {grant.pk}")
    assert refused.returncode == 1
    assert "403" in refused.stderr and "Only the person holding it" in refused.stderr

    revoked = berth_as(live, "sam", f"access revoke {grant.pk}")
    assert revoked.returncode == 0, revoked.stderr
    assert f"Access grant #{grant.pk}: revoked" in revoked.stdout
    assert live["sandbox"].get("RoleBinding", grant.binding_name, NAMESPACE) is None


def test_wait_ends_non_zero_with_the_reason_when_refused(live, shop_dev):
    running = waiting(live, "sam", f"{ASK} --wait --interval 0.2 --timeout 120")
    grant = asked_grant()
    decided(
        lambda: services.reject_request(
            request_id=grant.request_id,
            approver=User.objects.get(username="olivia"),
            reason="ask Dana to pair with you instead",
        )
    )
    out, errors = running.communicate(timeout=120)

    assert running.returncode == 1, (out, errors)
    assert "pending → refused" in errors
    assert "ask Dana to pair with you instead" in errors
    assert "berth kubeconfig" not in out


def test_what_the_api_refuses_is_said_by_field(live, shop_dev):
    refused = berth_as(
        live, "sam", f"access request {NAMESPACE} root --for 1h --reason 'just because'"
    )
    assert refused.returncode == 1
    assert "400" in refused.stderr
    assert "role: The dev tier offers owner, member, viewer: not 'root'." in refused.stderr

    too_long = berth_as(live, "sam", f"access request {NAMESPACE} viewer --for 3d --reason why")
    assert too_long.returncode == 1 and "duration: Access to dev namespaces" in too_long.stderr
    assert not AccessGrant.objects.exists()
    missing = berth_as(live, "sam", f"access request {NAMESPACE} viewer --reason why")
    assert missing.returncode == 2 and "--for" in missing.stderr
