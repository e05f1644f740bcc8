"""Every page a person can reach, checked by axe-core in headless Chromium: no serious or
critical accessibility violation, for a developer and for a platform admin.

The crawl starts at the home page and follows every link within Berth (not the admin site,
the API, downloads or signing out), so a new page is checked as soon as it is linked."""

from __future__ import annotations

from urllib.parse import parse_qsl, urldefrag, urlparse

import pytest
from axe_playwright_python.sync_playwright import Axe

from provisioning import reconcile
from tenants import services
from tenants.models import Tenant, User
from tenants.selectors import review
from tests.support.browser import needs_chromium, signed_in_page
from tests.support.cluster import seed_demo, stand_in
from tests.support.workflow import ask_for_namespace

pytestmark = [pytest.mark.browser, needs_chromium]

SKIPPED_PREFIXES = ("/admin/", "/api/", "/oidc/", "/static/", "/logout", "/metrics")
BLOCKING = {"serious", "critical"}
MAX_PAGES = 150  # a guard against a crawl that never ends: reaching it fails


@pytest.fixture
def sandbox():
    with stand_in() as running:
        yield running


def world_with_history(sandbox) -> None:
    """Pages with something on them: a ready namespace, one waiting, one rejected."""
    seed_demo(sandbox)
    tenant = Tenant.objects.get(slug="payments")
    developer, admin = User.objects.get(username="dev"), User.objects.get(username="pat")

    def ask(app: str, tier: str):
        return ask_for_namespace(tenant, developer, app=app, tier=tier, cpu="1", memory="1Gi")

    ready = ask("shop", "prod")
    services.approve_request(request_id=ready.pk, approver=admin, plan_digest=review(ready).digest)
    reconcile.converge(request_id=ready.pk, worker="axe")
    ask("cart", "prod")
    rejected = ask("till", "prod")
    services.reject_request(request_id=rejected.pk, approver=admin, reason="Use shop")


def page_kind(path: str, query: str) -> tuple[str, tuple[str, ...]]:
    """What makes two addresses the same page: the path and the names of its parameters.
    A month, a page number or a cursor changes the data, not the markup axe checks: the
    costs page's months alone would otherwise fill the crawl with one page."""
    return path, tuple(sorted(name for name, _ in parse_qsl(query, keep_blank_values=True)))


def crawl(page, base: str) -> dict[str, list[dict]]:
    """Serious violations by page, over every page reachable from the home page."""
    axe = Axe()
    seen: set[tuple[str, tuple[str, ...]]] = set()
    queue = ["/"]
    found: dict[str, list[dict]] = {}
    while queue:
        target = queue.pop(0)
        url = urlparse(target)
        if page_kind(url.path, url.query) in seen:
            continue
        assert len(seen) < MAX_PAGES, f"more than {MAX_PAGES} pages: {sorted(seen)}"
        seen.add(page_kind(url.path, url.query))
        response = page.goto(base + target)
        assert response is not None and response.status < 400, f"{target}: {response.status}"
        results = axe.run(page)
        serious = [v for v in results.response["violations"] if v["impact"] in BLOCKING]
        if serious:
            found[target] = [
                {"id": v["id"], "help": v["help"], "nodes": [n["target"] for n in v["nodes"]][:3]}
                for v in serious
            ]
        for href in page.eval_on_selector_all("a[href]", "els => els.map(e => e.href)"):
            url = urlparse(urldefrag(href)[0])
            if url.netloc != urlparse(base).netloc or url.path.startswith(SKIPPED_PREFIXES):
                continue
            if "format=csv" in url.query:
                continue
            if page_kind(url.path, url.query) not in seen:
                queue.append(url.path + (f"?{url.query}" if url.query else ""))
    assert len(seen) > 10, f"the crawl reached only {sorted(seen)}"
    return found


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("username", ["dev", "pat"])
def test_every_page_passes_axe_without_serious_violations(live_server, browser, sandbox, username):
    world_with_history(sandbox)
    page = signed_in_page(browser, live_server, User.objects.get(username=username))

    violations = crawl(page, live_server.url)

    assert violations == {}, "\n".join(
        f"{path}: {v['id']} ({v['help']}) at {v['nodes']}"
        for path, found in sorted(violations.items())
        for v in found
    )


@pytest.mark.django_db(transaction=True)
def test_signed_out_pages_pass_axe_without_serious_violations(live_server, page):
    axe = Axe()
    found = {}
    for path in ("/login/", "/login/failed/?reason=no_groups"):
        page.goto(live_server.url + path)
        serious = [v["id"] for v in axe.run(page).response["violations"] if v["impact"] in BLOCKING]
        if serious:
            found[path] = serious
    assert found == {}
