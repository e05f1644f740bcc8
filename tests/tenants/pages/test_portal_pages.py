"""What the request pages, the approval queue and the audit export show a person once the
plan is history: people's units, links to what a request made and committed, decisions
from the queue (one or several), the live history."""

import csv
import io

import pytest
from django.core.exceptions import ValidationError

from provisioning.models import GitCommit
from tenants import services
from tenants.choices import NamespaceState, RequestState
from tenants.models import (
    AuditEvent,
    EnvironmentTier,
    Namespace,
    Request,
    Tenant,
)
from tenants.selectors import review
from tests.support.workflow import ask_for_namespace

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def submit(demo_world, *, app="shop", tier="prod", cpu="1", memory="2Gi", requester=None):
    return ask_for_namespace(
        demo_world["tenant"],
        requester or demo_world["developer"],
        app=app,
        tier=tier,
        cpu=cpu,
        memory=memory,
    )


def made_ready(tenancy_request: Request) -> Namespace:
    """The request as a worker leaves it: its namespace live and its files committed."""
    namespace = Namespace.objects.get(request=tenancy_request)
    Namespace.objects.filter(pk=namespace.pk).update(state=NamespaceState.ACTIVE)
    Request.objects.filter(pk=tenancy_request.pk).update(state=RequestState.READY)
    commit = GitCommit.objects.create(
        request=tenancy_request,
        repo_url="https://forge.example/payments/gitops.git",
        branch="main",
        sha=COMMIT,
        message="Add shop",
        files={"apps/shop/prod/ns.yaml": "added"},
        diff="+++ b/apps/shop/prod/ns.yaml\n+kind: Namespace\n",
    )
    commit.namespaces.add(namespace)
    return namespace


# --- quantities as typed ---------------------------------------------------------------------

READING = '<span class="quantity">{} <span class="muted">({})</span></span>'


def test_asked_for_shows_the_quantities_as_typed_not_berths_units(client, demo_world):
    tenancy_request = submit(demo_world, cpu="500m", memory="2Gi")
    client.force_login(demo_world["developer"])
    page = client.get(f"/requests/{tenancy_request.pk}/").content.decode()

    assert "cpu: " + READING.format("500m", "0.5 cores") in page
    assert "memory: 2Gi<" in page
    assert "cpu_millis" not in page and "memory_mib" not in page


def test_queue_and_audit_show_the_quantities_as_typed_too(client, demo_world):
    submit(demo_world, cpu="500m", memory="512Mi")
    client.force_login(demo_world["admin"])

    queue = client.get("/approvals/").content.decode()
    audit_page = client.get("/audit/").content.decode()
    export = client.get("/audit/?format=csv")
    rows = list(csv.DictReader(io.StringIO(b"".join(export.streaming_content).decode())))

    assert "cpu: " + READING.format("500m", "0.5 cores") in queue
    assert "memory: " + READING.format("512Mi", "0.5 GiB") in queue
    assert "cpu: " + READING.format("500m", "0.5 cores") in audit_page
    submitted = next(row for row in rows if row["action"] == "request.submit")
    assert "'cpu': '500m'" in submitted["after"] and "'memory': '512Mi'" in submitted["after"]
    assert "cpu_millis" not in submitted["after"]


def test_namespace_page_shows_its_quota_as_typed(client, demo_world):
    namespace = made_ready(submit(demo_world, cpu="1500m", memory="3Gi"))
    client.force_login(demo_world["developer"])
    page = client.get(f"/namespaces/{namespace.pk}/").content.decode()
    assert f"CPU {READING.format('1500m', '1.5 cores')} · memory 3Gi · storage 0Gi" in page


# --- the form starts on a tier meant to stay -------------------------------------------------


def test_namespace_form_starts_on_the_first_permanent_tier(client, demo_world):
    tenant = demo_world["tenant"]
    ephemeral = EnvironmentTier.objects.filter(is_ephemeral=True).first()
    assert ephemeral is not None and tenant.allowed_tiers.filter(pk=ephemeral.pk).exists()
    # The demo orders the review-app tier first, as a tenant's list may.
    assert tenant.allowed_tiers.order_by("position")[0] == ephemeral
    first_permanent = tenant.allowed_tiers.filter(is_ephemeral=False).order_by("position")[0]

    client.force_login(demo_world["developer"])
    page = client.get("/tenants/payments/request/namespace/").content.decode()

    assert f'<option value="{first_permanent.slug}" selected>' in page
    assert f'<option value="{ephemeral.slug}" selected>' not in page


# --- after the fact: what was made and committed, linked ------------------------------------


def test_ready_request_links_its_namespace_and_its_commit(client, demo_world):
    tenancy_request = submit(demo_world)
    namespace = made_ready(tenancy_request)
    Tenant.objects.filter(pk=demo_world["tenant"].pk).update(
        gitops_commit_url="https://forge.example/payments/gitops/commit/{sha}"
    )
    client.force_login(demo_world["developer"])

    page = client.get(f"/requests/{tenancy_request.pk}/").content.decode()
    namespace_page = client.get(f"/namespaces/{namespace.pk}/").content.decode()

    assert f'href="/namespaces/{namespace.pk}/"' in page
    assert f'href="https://forge.example/payments/gitops/commit/{COMMIT}"' in page
    assert "What approval will commit" not in page
    assert "Committed" in page and "+kind: Namespace" in page
    assert f'href="https://forge.example/payments/gitops/commit/{COMMIT}"' in namespace_page


def test_commit_is_plain_text_without_a_configured_link(client, demo_world):
    tenancy_request = submit(demo_world)
    made_ready(tenancy_request)
    client.force_login(demo_world["developer"])
    page = client.get(f"/requests/{tenancy_request.pk}/").content.decode()
    assert f'<code title="{COMMIT}">{COMMIT[:12]}</code>' in page
    assert "/commit/" not in page


def test_approved_request_does_not_say_approval_will_commit(client, demo_world, tmp_path):
    from tests.support.gitserver import init_bare

    bare = init_bare(tmp_path / "payments.git")
    Tenant.objects.filter(slug="payments").update(gitops_repo_url=f"file://{bare}")
    tenancy_request = Request.objects.get(pk=submit(demo_world).pk)  # with the tenant as saved
    services.approve_request(
        request_id=tenancy_request.pk,
        approver=demo_world["admin"],
        plan_digest=review(tenancy_request).digest,
    )
    client.force_login(demo_world["developer"])
    page = client.get(f"/requests/{tenancy_request.pk}/").content.decode()
    assert "What approval will commit" not in page
    assert "Approved; what Berth commits when provisioning reaches it" in page


@pytest.mark.parametrize(
    "template",
    [
        "ftp://forge.example/{sha}",
        "https://forge.example/commit/",
        "https://x/{sha}/{sha}",
        "https://x/{sha}/{branch}",
        "https://forge example/{sha}",
    ],
)
def test_commit_link_template_is_validated(demo_world, template):
    tenant = demo_world["tenant"]
    tenant.gitops_commit_url = template
    with pytest.raises(ValidationError) as error:
        tenant.full_clean()
    assert "gitops_commit_url" in error.value.message_dict


def test_commit_link_is_settable_through_the_api_and_refused_when_bad(client, demo_world):
    client.force_login(demo_world["admin"])
    bad = client.patch(
        "/api/v1/tenants/payments/",
        {"gitops_commit_url": "javascript:{sha}"},
        content_type="application/json",
    )
    good = client.patch(
        "/api/v1/tenants/payments/",
        {"gitops_commit_url": "https://forge.example/p/commit/{sha}"},
        content_type="application/json",
    )
    assert bad.status_code == 400, bad.content
    assert good.status_code == 200, good.content
    assert Tenant.objects.get(slug="payments").gitops_commit_url.endswith("/commit/{sha}")


# --- the history follows without a reload ---------------------------------------------------


def test_progress_poll_brings_the_history_and_the_commit_once_ready(client, demo_world):
    tenancy_request = submit(demo_world)
    client.force_login(demo_world["developer"])
    moving = client.get(f"/requests/{tenancy_request.pk}/progress/").content.decode()
    assert 'id="history" data-swap' in moving and "submitted the request" in moving
    assert 'id="gitops"' not in moving  # the plan still describes the future

    services.approve_request(
        request_id=tenancy_request.pk,
        approver=demo_world["admin"],
        plan_digest=review(tenancy_request).digest,
    )
    made_ready(tenancy_request)
    done = client.get(f"/requests/{tenancy_request.pk}/progress/").content.decode()

    assert "approved the request" in done
    assert 'id="gitops" data-swap' in done and COMMIT[:12] in done
    assert "data-poll=" not in done
    assert "Created" in done and "/namespaces/" in done


# --- deciding from the queue -----------------------------------------------------------------


def queue_digest(page: str, pk: int) -> str:
    return page.split(f'value="{pk}:')[1].split('"')[0]


def test_approve_from_the_queue_row_binds_the_digest_shown(client, demo_world):
    tenancy_request = submit(demo_world)
    client.force_login(demo_world["admin"])
    page = client.get("/approvals/").content.decode()
    digest = queue_digest(page, tenancy_request.pk)
    assert digest == review(tenancy_request).digest

    response = client.post(
        f"/requests/{tenancy_request.pk}/approve/", {"plan_digest": digest, "back": "queue"}
    )

    assert response.status_code == 302 and response["Location"] == "/approvals/"
    tenancy_request.refresh_from_db()
    assert tenancy_request.state == RequestState.APPROVED


def test_queue_approval_of_a_moved_plan_approves_nothing(client, demo_world):
    tenancy_request = submit(demo_world)
    client.force_login(demo_world["admin"])
    digest = queue_digest(client.get("/approvals/").content.decode(), tenancy_request.pk)
    EnvironmentTier.objects.filter(slug="prod").update(pod_security_level="baseline")

    response = client.post(
        f"/requests/{tenancy_request.pk}/approve/",
        {"plan_digest": digest, "back": "queue"},
        follow=True,
    )

    assert "moved since the queue was shown" in response.content.decode()
    tenancy_request.refresh_from_db()
    assert tenancy_request.state == RequestState.SUBMITTED


def test_reject_from_the_queue_needs_a_reason(client, demo_world):
    tenancy_request = submit(demo_world)
    client.force_login(demo_world["admin"])
    empty = client.post(
        f"/requests/{tenancy_request.pk}/reject/", {"reason": " ", "back": "queue"}, follow=True
    )
    assert "needs a reason" in empty.content.decode()
    tenancy_request.refresh_from_db()
    assert tenancy_request.state == RequestState.SUBMITTED

    client.post(
        f"/requests/{tenancy_request.pk}/reject/", {"reason": "Use the shared one", "back": "queue"}
    )
    tenancy_request.refresh_from_db()
    assert tenancy_request.state == RequestState.REJECTED


def test_bulk_approval_approves_every_selected_request(client, demo_world):
    first, second, third = (submit(demo_world, app=app) for app in ("shop", "cart", "till"))
    client.force_login(demo_world["admin"])
    page = client.get("/approvals/").content.decode()
    selected = [f"{r.pk}:{queue_digest(page, r.pk)}" for r in (first, second)]

    response = client.post(
        "/approvals/approve/", {"selected": selected, "note": "sprint"}, follow=True
    )

    assert f"Approved #{first.pk}, #{second.pk}." in response.content.decode()
    states = dict(Request.objects.values_list("pk", "state"))
    assert states == {first.pk: "approved", second.pk: "approved", third.pk: "submitted"}
    assert AuditEvent.objects.filter(action="request.approve").count() == 2


def test_bulk_approval_refuses_mixed_policy_outcomes_and_approves_none(client, demo_world):
    prod, staging = submit(demo_world, app="shop"), submit(demo_world, app="cart", tier="staging")
    assert staging.state == RequestState.SUBMITTED
    Request.objects.filter(pk=staging.pk).update(approvals_required=2)
    client.force_login(demo_world["admin"])
    page = client.get("/approvals/").content.decode()

    response = client.post(
        "/approvals/approve/",
        {"selected": [f"{r.pk}:{queue_digest(page, r.pk)}" for r in (prod, staging)]},
        follow=True,
    )

    text = response.content.decode()
    assert "Nothing was approved" in text and "same policy outcome" in text
    assert set(Request.objects.values_list("state", flat=True)) == {"submitted"}
    assert not AuditEvent.objects.filter(action="request.approve").exists()


def test_bulk_approval_with_one_moved_plan_approves_none(client, demo_world):
    first, second = submit(demo_world, app="shop"), submit(demo_world, app="cart")
    client.force_login(demo_world["admin"])
    page = client.get("/approvals/").content.decode()
    selected = [f"{r.pk}:{queue_digest(page, r.pk)}" for r in (first, second)]
    selected[1] = f"{second.pk}:{'0' * 64}"

    response = client.post("/approvals/approve/", {"selected": selected}, follow=True)

    assert f"The plan of #{second.pk} moved" in response.content.decode()
    assert set(Request.objects.values_list("state", flat=True)) == {"submitted"}


@pytest.mark.parametrize("selected", [[], ["x:abc"], ["12:"], ["1" * 13 + ":d"]])
def test_bulk_approval_refuses_malformed_selections(client, demo_world, selected):
    submit(demo_world)
    client.force_login(demo_world["admin"])
    response = client.post("/approvals/approve/", {"selected": selected}, follow=True)
    assert response.status_code == 200
    text = response.content.decode()
    assert "Select the requests" in text or "did not say which plan" in text
    assert set(Request.objects.values_list("state", flat=True)) == {"submitted"}


def test_bulk_approval_cannot_reach_another_tenants_or_ones_own_request(client, demo_world):
    search = Tenant.objects.get(slug="search")
    others = ask_for_namespace(
        search, demo_world["outsider"], app="index", tier="prod", cpu="1", memory="1Gi"
    )
    # An owner of payments may not decide search's request, nor approve their own.
    own = submit(demo_world, requester=demo_world["owner"])
    client.force_login(demo_world["owner"])
    digest = review(others).digest

    foreign = client.post(
        "/approvals/approve/", {"selected": [f"{others.pk}:{digest}"]}, follow=True
    )
    mine = client.post("/approvals/approve/", {"selected": [f"{own.pk}:{review(own).digest}"]})

    assert f"Request #{others.pk} does not exist" in foreign.content.decode()
    assert mine.status_code == 403
    assert set(Request.objects.values_list("state", flat=True)) == {"submitted"}


def test_oldest_waiting_request_is_marked_in_the_queue(client, demo_world):
    oldest = submit(demo_world, app="shop")
    submit(demo_world, app="cart")
    client.force_login(demo_world["admin"])
    page = client.get("/approvals/").content.decode()
    assert f'<tr id="queue-row-{oldest.pk}" class="oldest">' in page
    assert page.count('class="badge badge-oldest"') == 1


def test_queue_reads_each_tenants_repository_once_and_binds_the_same_digests(
    client, demo_world, tmp_path, monkeypatch
):
    """Every row previews its GitOps change; the page fetches the tenant's branch once for
    all of them, and each row's digest is the one its own page would show."""
    import importlib

    from tests.support.gitserver import init_bare

    write = importlib.import_module("provisioning.gitops.write")  # the module, not write()

    bare = init_bare(tmp_path / "payments.git")
    Tenant.objects.filter(pk=demo_world["tenant"].pk).update(gitops_repo_url=f"file://{bare}")
    demo_world["tenant"].refresh_from_db()
    made = [submit(demo_world, app=app) for app in ("shop", "cart", "till")]
    fetches = []
    real = write._fetched
    monkeypatch.setattr(
        write,
        "_fetched",
        lambda remote, policy: (fetches.append(remote.url), real(remote, policy))[1],
    )
    client.force_login(demo_world["admin"])

    page = client.get("/approvals/").content.decode()

    assert fetches == [f"file://{bare}"]
    fetches.clear()
    for tenancy_request in made:
        assert queue_digest(page, tenancy_request.pk) == review(tenancy_request).digest
    assert len(fetches) == 3  # outside the page, one fetch per preview, as before
