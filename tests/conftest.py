import os
import sys
from collections.abc import Iterator
from types import SimpleNamespace

import pytest

from tests.support import programs
from tests.support.browser import ARTIFACTS, CHROMIUM, launch_args
from tests.support.caches import clear_own_cache
from tests.support.factories import MembershipFactory, TenantFactory, UserFactory
from tests.support.snapshots import built_once

CRDS_MISSING = "the upstream CRDs are not beside this checkout (../shared/crds); set BERTH_CRD_DIR"


# Fixtures that start a program (an OIDC provider, the development one among them, runs as a
# process of its own): a test using one starts it too.
PROGRAM_FIXTURES = frozenset({"provider", "dev_idp"})


def pytest_collection_modifyitems(config, items):
    """Tests marked `crds` need the upstream CRDs; a clone has none beside it, and Berth
    reads them only from BERTH_CRD_DIR (tests/settings.py sets it when they are there)."""
    from provisioning.schema import crd_directory

    for item in items:
        if PROGRAM_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.processes)
    # Longest first: spread over workers (xdist hands tests out in this order), the tests of
    # a minute end early instead of one worker finishing them alone while the others idle.
    items.sort(key=_weight)
    if crd_directory() is not None:
        return
    for item in items:
        if item.get_closest_marker("crds"):
            item.add_marker(pytest.mark.skip(reason=CRDS_MISSING))


HEAVY_MARKERS = ("fuzz", "faults", "bench", "browser", "integration")


def _weight(item: pytest.Item) -> int:
    """0: minutes of generated calls, faults, benches, browsers and worker processes;
    1: other tests that start programs; 2: the rest (sort is stable: modules stay together)."""
    if item.nodeid.startswith("tests/system/") or any(
        item.get_closest_marker(name) for name in HEAVY_MARKERS
    ):
        return 0
    return 1 if item.get_closest_marker("processes") else 2


def pytest_sessionstart(session):
    """Every tenant saved checks its branch with git once per name and process (cached):
    asked here for the demo's, it is no test's program. The test database is copied from a
    migrated one where it can be (tests/support/template_db.py)."""
    from tenants.gitrepo import branch_problem
    from tests.support import template_db

    branch_problem("main")
    template_db.install()


def pytest_sessionfinish(session, exitstatus):
    from tests.support.cluster import stop_shared_stand_ins

    stop_shared_stand_ins()


def pytest_terminal_summary(terminalreporter):
    """One line of why tests were skipped, by reason, most first: a clone with nothing
    beside it skips hundreds, and a newcomer should see the two or three reasons at once."""
    reasons: dict[str, int] = {}
    for report in terminalreporter.stats.get("skipped", []):
        if isinstance(report.longrepr, tuple):
            reason = report.longrepr[2].removeprefix("Skipped: ")
            reasons[reason] = reasons.get(reason, 0) + 1
    if reasons:
        ranked = sorted(reasons.items(), key=lambda item: -item[1])
        terminalreporter.write_line(
            "skipped, by reason: " + "; ".join(f"{count} × {reason}" for reason, count in ranked)
        )


def pytest_configure(config):
    if "not processes" in (config.option.markexpr or ""):
        sys.addaudithook(programs.refuse_unmarked)


DATA_MIGRATIONS = (
    "0004_default_approval_rules",
    "0009_ephemeral_auto_approve",
    "0015_gitops_loop_rules",
    "0034_access_rules",
    "0037_sleep_rules",
)


def _transactional(item: pytest.Item) -> bool:
    marker = item.get_closest_marker("django_db")
    return bool(marker and marker.kwargs.get("transaction")) or bool(
        {"transactional_db", "live_server"} & set(getattr(item, "fixturenames", ()))
    )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item, nextitem):
    """A transactional test's database is flushed as it ends, data migrations' rows (the
    default approval rules) included: they are put back, so that every test, whichever ran
    before it, starts from the database the migrations leave."""
    try:
        return (yield)
    finally:
        # After the last test the session's fixtures are gone, the test database with them.
        if nextitem is not None and _transactional(item):
            _put_back_data_migration_rows(item.config)


def _put_back_data_migration_rows(config: pytest.Config) -> None:
    import importlib

    from django.apps import apps
    from pytest_django.plugin import blocking_manager_key

    with config.stash[blocking_manager_key].unblock():
        for migration in DATA_MIGRATIONS:
            importlib.import_module(f"tenants.migrations.{migration}").create_rules(apps, None)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """Setup, call and teardown are the test's: a program started in any is its."""
    programs.RUNNING["test"] = None if item.get_closest_marker("processes") else item.nodeid
    try:
        return (yield)
    finally:
        programs.RUNNING["test"] = None


@pytest.fixture(autouse=True)
def _no_unmarked_programs(request) -> Iterator[None]:
    """Where code under test caught the refusal itself, the test fails here instead."""
    yield
    if refusal := programs.refusal_of(request.node.nodeid):
        pytest.fail(refusal)


@pytest.fixture(autouse=True)
def _forget_cluster_schemas() -> Iterator[None]:
    """Clusters of one name are other stand-ins in other tests: what one served (kept by
    name, for minutes) must not answer for the next."""
    from provisioning.schema import served

    served.forget()
    yield
    served.forget()


@pytest.fixture
def tenant(db):
    return TenantFactory(slug="payments")


@pytest.fixture
def developer(tenant):
    return MembershipFactory(tenant=tenant, user=UserFactory(username="dev")).user


@pytest.fixture
def platform_admin(db):
    return UserFactory(username="pat", is_platform_admin=True)


UNREACHABLE_CLUSTER = "http://127.0.0.1:9"  # nothing listens: provisioning fails


def seed_unreachable_demo() -> None:
    from tenants import demo

    demo.seed(sandbox_api_url=UNREACHABLE_CLUSTER)


@pytest.fixture
def demo_world(db) -> dict:
    """The demo seed (tenants.demo) with its cluster unreachable, and its people; seeded
    once per test process and given back to each test (tests/support/snapshots.py)."""
    from tenants.models import Tenant, User

    built_once("demo", seed_unreachable_demo)
    return {
        "tenant": Tenant.objects.get(slug="payments"),
        "developer": User.objects.get(username="dev"),  # a payments developer
        "owner": User.objects.get(username="olivia"),  # payments' owner
        "admin": User.objects.get(username="pat"),  # a platform admin
        "outsider": User.objects.get(username="sam"),  # a developer of the search tenant
    }


def _seed_api_demo() -> None:
    from tenants.choices import Role
    from tenants.models import Membership, Tenant

    seed_unreachable_demo()
    viewer = UserFactory(username="vera")
    Membership.objects.create(
        user=viewer, tenant=Tenant.objects.get(slug="payments"), role=Role.VIEWER
    )


@pytest.fixture
def api_world(db):
    """The demo world the API tests know (tests/support/api.py says who is who), with vera,
    a viewer of payments; built once per test process. A folder whose tests provision
    through the GitOps loop takes `gitops_world` instead."""
    from tenants.models import Tenant, User

    built_once("api", _seed_api_demo)
    return SimpleNamespace(
        payments=Tenant.objects.get(slug="payments"),
        search=Tenant.objects.get(slug="search"),
        admin=User.objects.get(username="pat"),
        owner=User.objects.get(username="olivia"),
        member=User.objects.get(username="dev"),
        outsider=User.objects.get(username="sam"),
        viewer=User.objects.get(username="vera"),
    )


@pytest.fixture(autouse=True)
def _empty_cache() -> None:
    """Each test starts from an empty cache: a review or usage kept for request 5 of one
    test's database must not answer for another's, nor a guardrail check of cluster 1."""
    from provisioning.reconcile.guardrails import forget_every_check

    clear_own_cache()
    forget_every_check()


@pytest.fixture
def eager_tasks():
    """Run Celery tasks in-process (retries included) instead of through a broker."""
    from portal.celery import app as celery_app

    celery_app.conf.task_always_eager = True
    yield
    celery_app.conf.task_always_eager = False


@pytest.fixture(autouse=True)
def generous_rate(settings):
    """No test is about the API's rate but the ones that set their own."""
    settings.BERTH_API_RATE = "100000/min"


@pytest.fixture
def browser() -> Iterator:
    from playwright.sync_api import sync_playwright

    # Playwright runs an event loop in this thread; test data is written before it starts.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    ARTIFACTS.mkdir(exist_ok=True)
    # Django's connections are per context, and Playwright's running loop is another one: a
    # connection opened on either side of it would stay open, unseen from the other, and keep
    # the test database from being dropped at the end. Each is closed on its own side.
    from django.db import connections

    connections.close_all()
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=launch_args())
        try:
            yield launched
        finally:
            launched.close()
            connections.close_all()


@pytest.fixture
def page(browser) -> Iterator:
    yield browser.new_page(viewport={"width": 1280, "height": 720})
