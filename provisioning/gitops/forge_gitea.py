"""A Gitea or Forgejo forge through its REST API v1 (the two speak the same), with `requests`:
the calls merge-request mode makes (find or open a pull request, read one, the repository
with the token's permissions), answering the forge's JSON. Only HTTP here: the caller
(provisioning.gitops.forge) checks the host against the egress rules first, and turns what
is raised into its ForgeError with the token redacted."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import requests

PAGE_SIZE = 50  # Gitea's default MAX_RESPONSE_ITEMS
MAX_PAGES = 20  # open pull requests read before giving up looking for Berth's own


class GiteaRefused(Exception):
    """The forge answered with an error status; `said` is its `message`."""

    def __init__(self, status: int, said: str) -> None:
        super().__init__(f"{status} {said}".rstrip())
        self.status = status
        self.said = said


def api_root(api_url: str) -> str:
    """The API root of an instance given by its URL or by its API's (…/api/v1)."""
    root = api_url.rstrip("/")
    return root if root.endswith("/api/v1") else root + "/api/v1"


class Client:
    def __init__(self, api_url: str, repository: str, token: str, timeout: float) -> None:
        self.root = api_root(api_url)
        owner, _, name = repository.partition("/")
        self.repo_path = f"/repos/{quote(owner, safe='')}/{quote(name, safe='')}"
        self.timeout = timeout
        self.session = requests.Session()
        self.session.headers.update(
            {"Authorization": f"token {token}", "Accept": "application/json"}
        )

    def close(self) -> None:
        self.session.close()

    def call(self, method: str, path: str, **kwargs: Any) -> Any:
        answer = self.session.request(
            method,
            self.root + self.repo_path + path,
            timeout=self.timeout,
            allow_redirects=False,  # a redirect could lead past the egress check
            **kwargs,
        )
        if answer.status_code >= 300:
            try:
                said = str(answer.json().get("message", ""))
            except (ValueError, AttributeError):
                said = ""
            raise GiteaRefused(answer.status_code, said[:300])
        return answer.json() if answer.content else None

    def repository(self) -> dict[str, Any]:
        return self.call("GET", "")

    def open_pull(self, *, head: str, base: str, title: str, body: str) -> dict[str, Any]:
        """The open pull request of `head` into `base` if there is one (an attempt that died
        after opening it), else a new one."""
        for page in range(1, MAX_PAGES + 1):
            found = self.call(
                "GET", "/pulls", params={"state": "open", "page": page, "limit": PAGE_SIZE}
            )
            for pull in found:
                if pull["head"]["ref"] == head and pull["base"]["ref"] == base:
                    return pull
            if len(found) < PAGE_SIZE:
                break
        return self.call(
            "POST", "/pulls", json={"head": head, "base": base, "title": title, "body": body}
        )

    def read_pull(self, number: int) -> dict[str, Any]:
        return self.call("GET", f"/pulls/{number}")
