"""A newcomer's first hour with `make run`, continued: the links they follow lead somewhere.
The demo tenants' commits link to the demo git server's commit page (and follow it to a
new port); the pages' references to docs/ link to pages that render them, and to nothing
else."""

from __future__ import annotations

import subprocess

import pytest

from tenants import demo
from tenants.models import Tenant, User

# --- the demo's commits are links -------------------------------------------------------------


def test_the_demo_tenants_commits_link_to_the_demo_git_servers_commit_page(demo_world, tmp_path):

    import requests

    from portal.gitserver import GitHttpServer

    git_dir = tmp_path / "git"
    with GitHttpServer(git_dir) as server:
        urls = demo.seed_git_repos(git_dir, http_url=server.base_url)
        first = subprocess.run(
            ["git", f"--git-dir={git_dir / 'payments.git'}", "rev-parse", "main"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        payments = Tenant.objects.get(slug="payments")
        link = payments.commit_link(first)
        page = requests.get(link, timeout=10)
        unknown = requests.get(f"{urls['payments']}/commit/{'0' * 40}", timeout=10)

    assert urls == {"payments": server.url("payments.git"), "search": server.url("search.git")}
    assert link == f"{server.url('payments.git')}/commit/{first}"
    assert page.status_code == 200
    assert page.headers["Content-Type"] == "text/plain; charset=utf-8"
    assert f"commit {first}" in page.text and "Initial commit" in page.text
    assert "+# GitOps repository of a Berth demo tenant" in page.text
    assert unknown.status_code == 404
    assert Tenant.objects.get(slug="search").commit_link(first) == (
        f"{server.url('search.git')}/commit/{first}"
    )


def test_an_earlier_demo_commit_link_follows_the_git_server_to_its_new_port(demo_world, tmp_path):
    git_dir = tmp_path / "git"
    demo.seed_git_repos(git_dir, http_url="http://127.0.0.1:8002")
    Tenant.objects.filter(slug="search").update(
        gitops_commit_url="https://forge.example/search/commit/{sha}"
    )

    demo.seed_git_repos(git_dir, http_url="http://127.0.0.1:8123")

    assert Tenant.objects.get(slug="payments").gitops_commit_url == (
        "http://127.0.0.1:8123/payments.git/commit/{sha}"
    )
    # One someone set in the admin stays.
    assert Tenant.objects.get(slug="search").gitops_commit_url == (
        "https://forge.example/search/commit/{sha}"
    )


def test_a_commit_of_a_repository_in_a_folder_has_its_page_too(tmp_path):
    """The forge stand-in keeps payments' repository as demo/payments.git under the same
    root (`make run`'s seed_demo_forge points its commit link there)."""
    import requests

    from forgesandbox.gitrepo import Repository
    from portal.gitserver import GitHttpServer

    git_dir = tmp_path / "git"
    nested = Repository.create(git_dir / "demo" / "payments.git", "main", {"README.md": "hi\n"})
    sha = nested.branch_sha("main")
    with GitHttpServer(git_dir) as server:
        page = requests.get(server.url(f"demo/payments.git/commit/{sha}"), timeout=10)
        unknown = requests.get(server.url(f"demo/payments.git/commit/{'0' * 40}"), timeout=10)
        missing = requests.get(server.url(f"demo/nothing.git/commit/{sha}"), timeout=10)
        escaping = requests.get(
            f"{server.base_url}/demo/%2E%2E/payments.git/commit/{sha}", timeout=10
        )

    assert page.status_code == 200
    assert page.headers["Content-Type"] == "text/plain; charset=utf-8"
    assert f"commit {sha}" in page.text and "Initial commit" in page.text
    assert unknown.status_code == 404 and missing.status_code == 404
    assert escaping.status_code != 200


# --- the pages' references to the docs are links ----------------------------------------------


def test_the_names_page_links_docs_naming_md_to_a_page_that_reads_it(client, demo_world):
    client.force_login(User.objects.get(username="pat"))

    names = client.get("/names/").content.decode()
    doc = client.get("/docs/naming.md")

    assert '<a href="/docs/naming.md">docs/naming.md</a>' in names
    assert doc.status_code == 200
    assert "<h1>Names: one owner per namespace name</h1>" in doc.content.decode()
    assert "<h2>A tenant owns exactly its namespaces</h2>" in doc.content.decode()


def test_the_sign_in_page_links_the_oidc_docs_which_anyone_may_read(client, db):
    signin = client.get("/login/").content.decode()
    doc = client.get("/docs/oidc.md")

    assert '<a href="/docs/oidc.md"><code>docs/oidc.md</code></a>' in signin
    assert doc.status_code == 200 and "Keycloak" in doc.content.decode()


@pytest.mark.parametrize("name", ["../README", "missing", "screenshots"])
def test_only_the_documents_in_docs_are_pages(client, db, name):
    assert client.get(f"/docs/{name}.md").status_code == 404


def test_raw_html_in_a_document_is_shown_as_text(tmp_path, monkeypatch, client, db):
    from tenants.views import docs

    (tmp_path / "note.md").write_text("# Note\n\n<script>alert(1)</script>\n")
    monkeypatch.setattr(docs, "DOCS_DIR", tmp_path)

    page = client.get("/docs/note.md").content.decode()

    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
