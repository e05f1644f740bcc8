"""The README's journey on `make run`, as a new user walks it: sign in at the development
identity provider as the developer (`dev` / `devdev`, README "Signing in"), ask for a dev
namespace in the form, watch its page go Ready, then, as that developer (kubectl's
impersonation, README "Guardrails"), create a Deployment in the new namespace and read it
back from the sandbox cluster."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.support.browser import CHROMIUM, launch_args, needs_chromium

pytestmark = [pytest.mark.browser, needs_chromium]

# Generous: a cold sandbox and worker on a busy machine; each wait ends at its event.
READY_MS = 180_000


def where(page, run) -> str:
    """What the browser showed and `make run` printed last, for a failure's message."""
    return (
        f"at {page.url} ({page.title()!r}):\n{page.content()[:800]}\n"
        "make run printed last:\n" + "".join(run["output"][-30:])
    )


def kubectl_as_the_developer(data, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            "kubectl",
            f"--kubeconfig={data / 'sandbox' / 'kubeconfig'}",
            "--as=dev",
            "--as-group=payments-devs",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_a_newcomer_walks_the_readme_journey_and_deploys_into_their_namespace(make_run_answering):
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import expect, sync_playwright

    run = make_run_answering
    url = run["url"]
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=launch_args())
        try:
            page = browser.new_page()
            page.goto(f"{url}/")
            assert "/login/" in page.url
            page.click("a.button:has-text('Sign in with')")
            try:
                page.wait_for_selector("#id_username")
            except PlaywrightTimeout as error:
                raise AssertionError(f"no sign-in form {where(page, run)}") from error
            page.fill("#id_username", "dev")
            page.fill("#id_password", "devdev")
            page.click("button[type=submit]")
            page.wait_for_url(f"{url}/")

            page.goto(f"{url}/tenants/payments/request/namespace/")
            page.fill("#id_app", "shop")
            page.select_option("#id_tier", "dev")
            page.fill("#id_cpu", "500m")
            page.fill("#id_memory", "512Mi")
            page.get_by_role("button", name="Submit request").click()
            page.wait_for_url(f"{url}/requests/*/")

            # The request page follows it to Ready by itself: no reload.
            expect(page.get_by_test_id("request-state")).to_have_text("Ready", timeout=READY_MS)
        finally:
            browser.close()

    if not shutil.which("kubectl"):
        pytest.skip(
            "kubectl is not on PATH: the journey's last step (deploying as the developer) needs it"
        )
    created = kubectl_as_the_developer(
        run["data"],
        "create",
        "deployment",
        "web",
        "--image=registry.example/web:1",
        "-n",
        "payments-shop-dev",
    )
    read = kubectl_as_the_developer(
        run["data"],
        "get",
        "deployment",
        "web",
        "-n",
        "payments-shop-dev",
        "-o",
        "jsonpath={.metadata.name}",
    )

    assert created.returncode == 0, created.stderr
    assert "deployment.apps/web created" in created.stdout
    assert read.returncode == 0 and read.stdout == "web", read.stderr
