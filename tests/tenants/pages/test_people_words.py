"""Pages and e-mails in people's words and units: what a request asks for, its history, the
failure e-mail, the audit log's objects, quotas as Kubernetes writes them ("500m (0.5 cores)")
and budgets in cores and GiB (exact on hover), the
dashboard's axes and colours, the tenant's permissions one row per role."""

import re
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from tenants.choices import RequestState
from tenants.models import Request
from tenants.notifications import email_text
from tenants.selectors.dashboard import admin_dashboard
from tenants.services.lifecycle import transition
from tests.support.budget import live_namespace, set_budget
from tests.support.timeline import ask, at, provision
from tests.support.workflow import ask_for_namespace, ask_for_project

RAW = ("request.mark_ready", "request.submit", "argocd_kargo", "['dev'", "m of", "Mi of", "Gi of")
CSS = Path(__file__).resolve().parents[3] / "static" / "berth" / "berth.css"


@pytest.fixture
def budgeted_world(demo_world):
    set_budget(demo_world["tenant"], cpu_millis=32_000, memory_mib=65_536, namespaces=20)
    return demo_world


def project(budgeted_world, app: str = "checkout") -> Request:
    return ask_for_project(budgeted_world["tenant"], budgeted_world["developer"], app=app)


def ready(tenancy_request: Request, admin) -> Request:
    for action in ("approve", "start_provisioning", "mark_ready"):
        transition(
            request_id=tenancy_request.pk,
            action=action,
            actor=admin if action == "approve" else None,
        )
    return Request.objects.get(pk=tenancy_request.pk)


def assert_no_raw_values(page: str) -> None:
    shown = re.sub(r'title="[^"]*"', "", page)  # exact values on hover are meant to be raw
    assert [raw for raw in RAW if raw in shown] == []


# --- what a request asks for, and what happened to it ------------------------------------


def test_a_projects_asked_for_joins_its_tiers_and_names_its_engine(client, budgeted_world):
    tenancy_request = project(budgeted_world)
    client.force_login(budgeted_world["developer"])
    page = client.get(f"/requests/{tenancy_request.pk}/").content.decode()

    asked = page.split("<dt>Asked for</dt>")[1].split("</dd>")[0]
    assert '<span class="pill">tiers: dev, staging, prod</span>' in asked
    assert '<span class="pill">engine: Argo CD + Kargo</span>' in asked
    assert_no_raw_values(page)


def test_the_history_says_what_happened_in_words(client, budgeted_world):
    tenancy_request = ready(project(budgeted_world), budgeted_world["admin"])
    client.force_login(budgeted_world["developer"])
    page = client.get(f"/requests/{tenancy_request.pk}/").content.decode()

    history = page.split('id="history"')[1].split("</section>")[0]
    assert "submitted the request" in history and "approved the request" in history
    assert "finished provisioning: ready" in history
    assert_no_raw_values(page)


def test_a_projects_namespaces_read_in_promotion_order_with_its_kargo_namespace(
    client, budgeted_world
):
    tenancy_request = project(budgeted_world)
    client.force_login(budgeted_world["developer"])
    page = client.get(f"/requests/{tenancy_request.pk}/").content.decode()

    listed = page.split('class="created"')[1].split("</p>")[0]
    names = re.findall(r"<code>([a-z0-9-]+)</code>", listed)
    assert names == [
        "payments-checkout-dev",
        "payments-checkout-staging",
        "payments-checkout-prod",
        "payments-checkout-kargo",
    ]
    assert "(its Kargo project)" in listed


def test_the_failure_email_says_failed_not_is_failed(budgeted_world):
    tenancy_request = project(budgeted_world)
    Request.objects.filter(pk=tenancy_request.pk).update(state=RequestState.FAILED)
    tenancy_request.refresh_from_db()

    subject, body = email_text(tenancy_request, "failed")

    assert f"Request #{tenancy_request.pk} (new project) for payments failed." in body
    assert "is failed" not in body
    assert "tiers: dev, staging, prod\n" in body and "engine: Argo CD + Kargo\n" in body
    assert subject.endswith(f"request #{tenancy_request.pk} failed")


# --- the audit log ---------------------------------------------------------------------------


def test_the_audit_log_names_objects_by_their_names_with_links(client, budgeted_world):
    tenancy_request = project(budgeted_world)
    client.force_login(budgeted_world["admin"])
    page = client.get("/audit/").content.decode()

    row = next(row for row in page.split("<tr>") if f"/requests/{tenancy_request.pk}/" in row)
    assert (
        f'<a href="/requests/{tenancy_request.pk}/">Request #{tenancy_request.pk}, '
        "new project for payments</a>"
    ) in row
    assert f"for {budgeted_world['tenant'].pk}<" not in row  # never the tenant's numeric id
    assert '<a href="/tenants/payments/">payments</a>' in row
    assert "submitted the request" in row and 'title="request.submit"' in row
    assert_no_raw_values(page)


# --- units as people read them ---------------------------------------------------------------


def test_budgets_read_in_cores_and_gib_with_the_exact_value_on_hover(client, budgeted_world):
    tenant = budgeted_world["tenant"]
    live_namespace(tenant, "big-dev", cpu_millis=8200, memory_mib=16640)
    client.force_login(budgeted_world["developer"])
    page = client.get(f"/tenants/{tenant.slug}/").content.decode()

    cpu = page.split('id="budget-cpu-text">')[1].split("</span>")[0]
    memory = page.split('id="budget-memory-text">')[1].split("</span>")[0]
    assert re.sub(r"<[^>]+>", "", cpu).strip() == "8.2 of 32 cores (23.8 left)"
    assert re.sub(r"<[^>]+>", "", memory).strip() == "16.25 of 64 GiB (47.75 left)"
    assert 'title="8200m">8.2</abbr>' in cpu and 'title="48896Mi">47.75</abbr>' in memory
    # The namespaces using most: each one's quota, as written.
    using_most = page.split('id="using-most"')[1].split("</table>")[0]
    assert '16640Mi <span class="muted">(16.25 GiB)</span>' in using_most
    assert_no_raw_values(page)


def test_a_namespace_and_the_queue_show_quotas_as_written_with_the_reading_beside(
    client, budgeted_world
):
    tenant = budgeted_world["tenant"]
    namespace = live_namespace(tenant, "small-dev", cpu_millis=500, memory_mib=1536)
    client.force_login(budgeted_world["admin"])
    page = client.get(f"/namespaces/{namespace.pk}/").content.decode()
    quota = page.split("<dt>Quota</dt><dd>")[1].split("</dd>")[0]
    assert re.sub(r"<[^>]+>", "", quota) == (
        "CPU 500m (0.5 cores) · memory 1536Mi (1.5 GiB) · storage 0Gi"
    )

    ask_for_namespace(
        tenant, budgeted_world["developer"], app="shop", tier="prod", cpu="1500m", memory="1536Mi"
    )
    queue = client.get("/approvals/").content.decode()
    assert 'cpu: <span class="quantity">1500m <span class="muted">(1.5 cores)</span>' in queue
    assert_no_raw_values(queue)


# --- the dashboard's charts --------------------------------------------------------------------


def test_the_provisioning_axis_counts_from_zero_past_the_longest_day(client, budgeted_world):
    now = timezone.now().replace(hour=12, minute=0, second=0, microsecond=0)
    for index, seconds in enumerate((1, 2)):  # a day of 1 s, a day of 2 s
        asked = now - timedelta(days=index + 1)
        made = at(asked, lambda index=index: ask(budgeted_world, f"app{index}", tier="dev"))
        at(asked + timedelta(seconds=seconds), lambda made=made: provision(made.pk, ready=True))

    chart = at(now, admin_dashboard)["provisioning_time"]
    assert chart["p90"] == "2s"
    labels = [tick["label"] for tick in chart["ticks"]]
    assert labels == ["0", "1s", "2s"] and chart["top"] == "2s"
    assert len(set(labels)) == len(labels)

    client.force_login(budgeted_world["admin"])
    page = client.get("/dashboard/").content.decode()
    svg = page.split('id="provisioning-time"')[1].split("</svg>")[0]
    assert re.findall(r'class="tick scale"[^>]*>([^<]+)<', svg) == ["0", "1s", "2s"]
    # The axis' labels sit left of the plot, whose bars start right of them.
    assert all(
        float(x) <= 30 for x in re.findall(r'<text x="([\d.]+)"[^>]*class="tick scale"', svg)
    )
    assert '<g transform="translate(32 0)">' in svg


def test_state_bars_are_coloured_by_what_the_state_means(client, budgeted_world):
    failed = ask(budgeted_world, "down", tier="dev")
    provision(failed.pk, ready=False, message="sandbox: cluster unreachable")
    client.force_login(budgeted_world["admin"])
    page = client.get("/dashboard/").content.decode()

    assert 'class="hbar hbar-failed"' in page and 'class="hbar hbar-ready"' in page
    css = CSS.read_text()
    assert re.search(r"\.hbar-failed rect[^{]*\{ fill: var\(--bad\); \}", css)
    assert re.search(r"\.hbar-ready rect \{ fill: var\(--ok\); \}", css)


# --- the tenant's permissions ----------------------------------------------------------------


def test_permissions_are_one_row_group_per_role_with_alike_tiers_together(client, budgeted_world):
    client.force_login(budgeted_world["developer"])
    page = client.get("/tenants/payments/").content.decode()

    table = page.split('id="permissions-table"')[1].split("</table>")[0]
    groups = table.split("<tbody>")[1:]
    assert [re.search(r'rowgroup"[^>]*>([^<]+)', group)[1] for group in groups] == [
        "Owners",
        "Members",
        "Viewers",
        "GitOps (berth-gitops)",
    ]
    assert table.count("<tr>") <= 1 + 2 * len(groups)  # was a row per tier and role: 16
    members = groups[1]
    rights = [re.findall(r"<code>([a-z]+)</code>", row) for row in members.split("<tr>")[1:]]
    assert rights == [["review", "dev", "staging"], ["prod"]]


@pytest.mark.parametrize(
    ("dimension", "stored", "shown", "exact", "written"),
    [
        ("cpu", 8200, "8.2 cores", "8200m", "8200m (8.2 cores)"),
        ("cpu", 1000, "1 core", "1", "1 core"),
        ("cpu", 500, "0.5 cores", "500m", "500m (0.5 cores)"),
        ("cpu", 125, "0.125 cores", "125m", "125m (0.125 cores)"),
        ("memory", 16640, "16.25 GiB", "16640Mi", "16640Mi (16.25 GiB)"),
        ("memory", 2048, "2 GiB", "2Gi", "2Gi"),
        ("memory", 100, "≈0.1 GiB", "100Mi", "100Mi (≈0.1 GiB)"),
        ("storage", 0, "0 GiB", "0Gi", "0Gi"),
        ("namespaces", 3, "3 namespaces", "3", "3 namespaces"),
    ],
)
def test_one_helper_reads_every_amount_as_people_do(dimension, stored, shown, exact, written):
    from tenants.quantities import amount

    read = amount(dimension, stored)
    assert (str(read), read.exact, read.written()) == (shown, exact, written)
    # Rounded amounts say their exact quantity where nothing can be hovered.
    assert read.plain() == (f"{shown} ({exact})" if shown.startswith("≈") else shown)
