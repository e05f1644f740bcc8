"""The newcomer's first hour on `make run`, README only, as one person and one reviewer
walk it: `dev` signs in at the development identity provider, asks for a dev namespace,
watches it go Ready, downloads the "Use it" kubeconfig and runs `kubectl get pods` as
themselves (kubectl runs `berth token --exec`, which sends them to the provider's page in
the same browser; no token seeded, no kubelogin); then asks for a prod namespace, which
`pat` approves and which opens a pull request on the forge stand-in; the pull request's
link leads to the forge's review page, where Merge makes the request Ready (the forge's
webhook reaches Berth). Every commit and pull-request link the pages rendered answers 200."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

from tests.support.browser import CHROMIUM, launch_args, needs_chromium, screenshot

pytestmark = [
    pytest.mark.browser,
    needs_chromium,
    pytest.mark.skipif(
        not shutil.which("kubectl"),
        reason="kubectl is not on PATH: the journey signs in with it as the developer",
    ),
]

# Generous: a cold sandbox and worker on a busy machine; each wait ends at its event.
READY_MS = 180_000
VENV_BIN = Path(sys.executable).parent


def where(page, run) -> str:
    """What the browser showed and `make run` printed last, for a failure's message."""
    return (
        f"at {page.url} ({page.title()!r}):\n{page.content()[:800]}\n"
        "make run printed last:\n" + "".join(run["output"][-30:])
    )


def sign_in(page, url: str, username: str) -> None:
    page.goto(f"{url}/")
    page.click("a.button:has-text('Sign in with')")
    page.wait_for_selector("#id_username")
    page.fill("#id_username", username)
    page.fill("#id_password", username * 2)
    page.click("button[type=submit]")
    page.wait_for_url(f"{url}/")


def ask_for_a_namespace(page, url: str, *, app: str, tier: str) -> str:
    """The namespace form, filled and sent; the request page's URL."""
    page.goto(f"{url}/tenants/payments/request/namespace/")
    page.fill("#id_app", app)
    page.select_option("#id_tier", tier)
    page.fill("#id_cpu", "500m")
    page.fill("#id_memory", "512Mi")
    page.get_by_role("button", name="Submit request").click()
    page.wait_for_url(f"{url}/requests/*/")
    return page.url


def links_to_follow(page) -> set[str]:
    """The commit and pull-request links on the page (the demo's git server and forge)."""
    hrefs = page.eval_on_selector_all("a[href]", "links => links.map(a => a.href)")
    return {href for href in hrefs if re.search(r"/commit/[0-9a-f]{7,}|/pulls?/\d+", href)}


def kubectl_as_oneself(kubeconfig: Path, home: Path, *args: str) -> subprocess.Popen:
    """kubectl with the downloaded kubeconfig, from a shell whose PATH has no virtualenv (the
    kubeconfig names `berth` by its path) and whose browser is the test (the address is
    opened in the test's page)."""
    path = os.pathsep.join(
        part for part in os.environ["PATH"].split(os.pathsep) if Path(part) != VENV_BIN
    )
    environment = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("BERTH_", "DJANGO_"))},
        "PATH": path,
        "KUBECONFIG": str(kubeconfig),
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / "cache"),
        "BROWSER": "true",
    }
    return subprocess.Popen(
        ["kubectl", *args],
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def sign_in_address(kubectl: subprocess.Popen, run: dict) -> str:
    """The provider's address `berth token --exec` printed through kubectl's stderr."""
    said = []
    for line in kubectl.stderr or ():
        said.append(line)
        if line.strip().startswith(f"{run['issuer']}/authorize?"):
            return line.strip()
    kubectl.wait()
    raise AssertionError(
        "kubectl printed no sign-in address:\n"
        + "".join(said)
        + "\nmake run printed last:\n"
        + "".join(run["output"][-30:])
    )


def test_a_newcomer_signs_in_deploys_reaches_their_namespace_and_merges_a_prod_change(
    make_run_answering, tmp_path
):
    from playwright.sync_api import expect, sync_playwright

    run = make_run_answering
    url = run["url"]
    followed: set[str] = set()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=launch_args())
        try:
            developer = browser.new_context(accept_downloads=True).new_page()
            # Each wait ends at its event; beside the whole suite, a page can take long.
            developer.context.set_default_timeout(READY_MS)
            sign_in(developer, url, "dev")

            # A dev namespace: the demo's rules approve it; its page follows it to Ready.
            ask_for_a_namespace(developer, url, app="shop", tier="dev")
            expect(developer.get_by_test_id("request-state")).to_have_text(
                "Ready", timeout=READY_MS
            )
            developer.locator("#gitops p.committed").wait_for(timeout=READY_MS)
            followed |= links_to_follow(developer)

            # Use it: the kubeconfig for `berth token --exec`, downloaded as a file.
            developer.locator("#progress .created a", has_text="payments-shop-dev").click()
            developer.goto(developer.url.split("#")[0] + "?credentials=berth#use-it")
            with developer.expect_download() as downloading:
                developer.click("#kubeconfig-download")
            kubeconfig = tmp_path / downloading.value.suggested_filename
            downloading.value.save_as(kubeconfig)
            screenshot(developer, "journey-use-it")

            # kubectl as dev: berth prints the provider's address; dev, already signed in
            # there, consents in the same browser and the answer reaches berth's port.
            kubectl = kubectl_as_oneself(
                kubeconfig, tmp_path, "get", "pods", "-n", "payments-shop-dev"
            )
            consent = developer.context.new_page()
            consent.goto(sign_in_address(kubectl, run))
            consent.get_by_role("button", name="Authorize").click()
            expect(consent.locator("body")).to_contain_text("You are signed in")
            _, said = kubectl.communicate(timeout=120)
            assert kubectl.returncode == 0, said
            assert "No resources found in payments-shop-dev namespace." in said

            # A prod namespace: an admin approves it, and its change waits for a review.
            prod_request = ask_for_a_namespace(developer, url, app="shop", tier="prod")
            number = prod_request.rstrip("/").rsplit("/", 1)[1]
            admin = browser.new_context().new_page()
            admin.context.set_default_timeout(READY_MS)
            sign_in(admin, url, "pat")
            admin.goto(f"{url}/approvals/")
            admin.get_by_role("button", name=f"Approve request #{number}").click()
            admin.wait_for_selector(".message-success")

            developer.goto(prod_request)
            pull = developer.get_by_test_id("pull-request").locator("a")
            pull.wait_for(timeout=READY_MS)
            followed |= links_to_follow(developer)

            # The reviewer follows the link to the forge's page and merges.
            review = admin.context.new_page()
            review.goto(pull.get_attribute("href"))
            assert "Merge" in review.content(), where(review, run)
            review.get_by_role("button", name="Merge").click()
            merged_at = time.monotonic()
            expect(developer.get_by_test_id("request-state")).to_have_text(
                "Ready", timeout=READY_MS
            )
            took = time.monotonic() - merged_at
            print(f"prod request Ready {took:.1f} s after the merge on the review page")
            screenshot(developer, "journey-prod-ready")
            developer.locator("#gitops p.committed").wait_for(timeout=READY_MS)
            followed |= links_to_follow(developer)

            developer.goto(f"{url}/tenants/payments/")
            followed |= links_to_follow(developer)
        finally:
            browser.close()

    # Berth heard of the merge from the forge's webhook, not at its periodic check.
    log = "".join(run["output"])
    assert f"forge webhook for payments: merged: request #{number} goes on" in log, log[-3000:]
    assert any("/commit/" in link for link in followed), followed
    assert any(re.search(r"/pulls?/\d+", link) for link in followed), followed
    broken = {link: requests.get(link, timeout=30).status_code for link in sorted(followed)}
    assert all(status == 200 for status in broken.values()), broken
