"""`make run`'s loop, a reviewer's way: the link Berth shows on a request awaiting merge
opens the forge's review page, its Merge button merges, and the webhook `seed_demo_forge`
points at Berth (signed with the tenant's secret) lets the request go on to Ready, with no
wait for the periodic check."""

from __future__ import annotations

import html
import re

import requests

from tenants.choices import RequestState
from tenants.management.commands.seed_demo_forge import point_hook
from tenants.models import PullRequest
from tests.forgesandbox.conftest import HookReceiver, hook_receiver  # noqa: F401 - fixture
from tests.support.gitserver import files_on

from .conftest import REPO, TOKEN, closed_event, opened
from .test_forge_events import deliver
from .test_merge_request_mode import converge


def test_merge_on_the_review_page_lets_the_request_go_on_by_the_webhook(
    forge_world,
    client,
    hook_receiver: HookReceiver,  # noqa: F811 - the fixture imported above
):
    forge, tenant = forge_world["forge"], forge_world["tenant"]
    said = point_hook(forge.api_url, TOKEN, REPO, hook_receiver.url, tenant.forge_webhook_secret)
    waiting = opened(forge_world)
    link = PullRequest.objects.get(request=waiting).url

    page = requests.get(link, timeout=30)
    form = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)">', page.text)[:2])
    pressed = requests.post(f"{link}/merge", data=form, timeout=30)

    assert said == f"webhook on {REPO} made, delivering to {hook_receiver.url}"
    assert link == f"{forge.url}/{REPO}/pull/1"
    assert f"<h1>{html.escape(forge.repo(REPO).pulls[1].title)} <small>#1</small></h1>" in page.text
    assert pressed.status_code == 200 and "Merged" in pressed.text  # the redirect, followed
    assert "apps/shop/dev/application.yaml" in files_on(forge.repo(REPO).git.path)
    # What the forge posts to Berth's receiver, as it came.
    assert deliver(client, closed_event(forge_world, hook_receiver)).status_code == 204
    waiting.refresh_from_db()
    assert waiting.state == RequestState.PROVISIONING
    assert converge(waiting).state == RequestState.READY
