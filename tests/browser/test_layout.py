"""Pages at 1280 px, the width of a small laptop, in headless Chromium: the top bar of a
platform admin (the longest one there is) stays one line, and the pages that show people's
numbers and words read as people read them. The screenshots are kept (in pytest's temporary
folder) so a person can look at them."""

from datetime import timedelta

import pytest
from django.utils import timezone

from tenants import demo, services
from tenants.models import Tenant, User
from tenants.selectors import review
from tests.support.browser import needs_chromium, signed_in_page
from tests.support.timeline import ask, at, provision
from tests.support.workflow import ask_for_project

pytestmark = [pytest.mark.browser, needs_chromium]

WIDTH = 1280


@pytest.fixture
def shots(tmp_path_factory):
    return tmp_path_factory.mktemp("layout")


def one_line(page) -> dict:
    """The top bar's height against one line of it: the brand's box plus the bar's own
    vertical padding; and the distinct tops of its links (one when they share a line)."""
    return page.evaluate("""() => {
        const bar = document.querySelector('.topbar');
        const style = getComputedStyle(bar);
        const padding = parseFloat(style.paddingTop) + parseFloat(style.paddingBottom);
        const tallest = Math.max(...[...bar.querySelectorAll('.brand, .topnav a, .session > *')]
            .map(e => e.getBoundingClientRect().height));
        const tops = new Set([...bar.querySelectorAll('.topnav a, .session a, .who')]
            .map(e => Math.round(e.getBoundingClientRect().top)));
        return {height: bar.getBoundingClientRect().height, line: tallest + padding,
                tops: [...tops], overflow: document.documentElement.scrollWidth > innerWidth};
    }""")


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("who", ["pat", "admin"])
def test_a_platform_admins_top_bar_is_one_line_at_1280_px(live_server, browser, shots, who):
    demo.seed(sandbox_api_url="http://127.0.0.1:9")
    # The longest bars: a platform admin's (with the badge), and the break-glass
    # superuser's (with the link to Django's admin).
    if who == "admin":
        User.objects.create_superuser("admin", "admin@example.com", "x" * 20)
    person = User.objects.get(username=who)
    Tenant.objects.filter(slug="payments").update(
        budget_cpu_millis=32_000, budget_memory_mib=65_536
    )
    asked = ask_for_project(
        Tenant.objects.get(slug="payments"), User.objects.get(username="dev"), app="checkout"
    )

    page = signed_in_page(browser, live_server, person)
    assert page.viewport_size["width"] == WIDTH
    for path in ("/", "/dashboard/", "/tenants/payments/", "/audit/", f"/requests/{asked.pk}/"):
        page.goto(f"{live_server.url}{path}")
        bar = one_line(page)
        name = path.strip("/").replace("/", "-") or "home"
        page.screenshot(path=str(shots / f"{who}-{name}.png"), full_page=True)
        assert bar["height"] <= bar["line"] + 1, (path, bar)
        assert len(bar["tops"]) <= 2, (path, bar)  # links and the name: one row (±rounding)
        assert max(bar["tops"]) - min(bar["tops"]) < 8, (path, bar)
        assert not bar["overflow"], path  # and nothing pushed off the side instead


@pytest.mark.django_db(transaction=True)
def test_dashboard_chart_axis_and_bars_read_right_at_1280_px(
    live_server, browser, shots, demo_world
):
    world = demo_world
    now = timezone.now()
    for index, seconds in enumerate((1, 2)):  # medians of 1 s and 2 s on two days
        asked = now - timedelta(days=index + 1)
        made = at(asked, lambda index=index: ask(world, f"app{index}"))
        at(
            asked + timedelta(minutes=5),
            lambda made=made: services.approve_request(
                request_id=made.pk, approver=world["admin"], plan_digest=review(made).digest
            ),
        )
        at(
            asked + timedelta(minutes=5, seconds=seconds),
            lambda made=made: provision(made.pk, ready=True),
        )
    failed = at(now - timedelta(hours=2), lambda: ask(world, "down", tier="dev"))
    at(
        now - timedelta(hours=2) + timedelta(seconds=3),
        lambda: provision(failed.pk, ready=False, message="sandbox: cluster unreachable"),
    )

    page = signed_in_page(browser, live_server, world["admin"])
    page.goto(f"{live_server.url}/dashboard/")
    page.screenshot(path=str(shots / "dashboard-charts.png"), full_page=True)
    chart = page.locator("#provisioning-time svg")
    labels = chart.locator("text.scale").all_text_contents()
    assert labels == ["0", "1s", "2s"]
    # No axis label is drawn over a bar.
    overlaps = page.evaluate("""() => {
        const svg = document.querySelector('#provisioning-time svg');
        const boxes = s => [...svg.querySelectorAll(s)].map(e => e.getBoundingClientRect());
        const meet = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom
            && b.top < a.bottom;
        return boxes('text').flatMap(t => boxes('rect.day-bar').filter(r => meet(t, r))).length;
    }""")
    assert overlaps == 0
    colour = page.evaluate(
        """s => getComputedStyle(document.querySelector(s)).fill""", "#states .hbar-failed rect"
    )
    ready = page.evaluate(
        """s => getComputedStyle(document.querySelector(s)).fill""", "#states .hbar-ready rect"
    )
    assert colour == "rgb(180, 35, 24)"  # --bad, the error colour
    assert ready != colour
