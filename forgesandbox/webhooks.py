"""Webhook deliveries as GitHub makes them: a POST of the event to each active hook that asks
for it, with ``X-GitHub-Event``, ``X-GitHub-Delivery``, ``X-GitHub-Hook-ID`` and, when the
hook has a secret, ``X-Hub-Signature-256: sha256=<HMAC-SHA256 of the body>`` (and the older
SHA-1 ``X-Hub-Signature``); for a hook made through the GitLab routes, as GitLab makes them
(``X-Gitlab-Event``, the secret sent as it is in ``X-Gitlab-Token``). Sent one at a time from
a background thread, after the answer to the request that caused them, as GitHub sends them;
``flush()`` waits for them."""

from __future__ import annotations

import hmac
import http.client
import json
import queue
import threading
import urllib.parse
import uuid
from dataclasses import dataclass, field

from . import gitea_render, gitlab_render
from .model import Hook

TIMEOUT_SECONDS = 10  # GitHub gives a receiver ten seconds


def signature(secret: str, body: bytes, digest: str = "sha256") -> str:
    return f"{digest}=" + hmac.new(secret.encode(), body, digest).hexdigest()


@dataclass
class Delivery:
    guid: str
    hook_id: int
    url: str
    event: str
    action: str | None
    headers: dict[str, str]
    body: bytes
    hook: Hook = field(repr=False)
    status: int | None = None  # the receiver's answer; None until sent, or when unreachable
    error: str | None = None
    done: threading.Event = field(default_factory=threading.Event, repr=False)

    def summary(self) -> dict:
        return {
            "guid": self.guid,
            "hook_id": self.hook_id,
            "url": self.url,
            "event": self.event,
            "action": self.action,
            "status": self.status,
            "error": self.error,
        }


class Deliverer:
    def __init__(self) -> None:
        self.log: list[Delivery] = []
        self._queue: queue.Queue[Delivery | None] = queue.Queue()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="forgesandbox-hooks", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._thread is not None:
            self._queue.put(None)
            self._thread.join()
            self._thread = None

    def enqueue(self, hook: Hook, event: str, payload: dict) -> Delivery:
        if hook.content_type == "form":
            body = urllib.parse.urlencode({"payload": json.dumps(payload)}).encode()
            content_type = "application/x-www-form-urlencoded"
        else:
            body = json.dumps(payload).encode()
            content_type = "application/json"
        guid = str(uuid.uuid4())
        if hook.flavour == "gitea":
            headers = gitea_render.delivery_headers(hook, event, body)
            guid = headers["X-Gitea-Delivery"]
        elif hook.flavour == "gitlab":
            headers = gitlab_render.delivery_headers(hook, event)
            guid = headers["X-Gitlab-Event-UUID"]
        else:
            headers = {
                "Content-Type": content_type,
                "User-Agent": "GitHub-Hookshot/forgesandbox",
                "X-GitHub-Event": event,
                "X-GitHub-Delivery": guid,
                "X-GitHub-Hook-ID": str(hook.id),
                "X-GitHub-Hook-Installation-Target-Type": "repository",
            }
            if hook.secret:
                headers["X-Hub-Signature-256"] = signature(hook.secret, body)
                headers["X-Hub-Signature"] = signature(hook.secret, body, "sha1")
        delivery = Delivery(
            guid=guid,
            hook=hook,
            hook_id=hook.id,
            url=hook.url,
            event=event,
            action=payload.get("action"),
            headers=headers,
            body=body,
        )
        self.log.append(delivery)
        self._queue.put(delivery)
        return delivery

    def flush(self, timeout: float = 30.0) -> None:
        """Wait until every delivery queued so far was sent (or failed)."""
        for delivery in list(self.log):
            if not delivery.done.wait(timeout):
                raise TimeoutError(
                    f"webhook {delivery.guid} to {delivery.url} not sent in {timeout}s"
                )

    def _run(self) -> None:
        while (delivery := self._queue.get()) is not None:
            try:
                delivery.status = _post(delivery)
                ok = 200 <= delivery.status < 300
                delivery.hook.last_response = {
                    "code": delivery.status,
                    "status": "active" if ok else "failed",
                    "message": "OK" if ok else f"Invalid HTTP Response: {delivery.status}",
                }
            except OSError as error:
                delivery.error = str(error)
                delivery.hook.last_response = {
                    "code": None,
                    "status": "failed",
                    "message": str(error),
                }
            delivery.done.set()


def _post(delivery: Delivery) -> int:
    """POST with http.client: urllib would rewrite the headers' case (X-Github-Event), and a
    receiver may be as strict about them as about GitHub's."""
    url = urllib.parse.urlsplit(delivery.url)
    connection_class = (
        http.client.HTTPSConnection if url.scheme == "https" else http.client.HTTPConnection
    )
    connection = connection_class(url.netloc, timeout=TIMEOUT_SECONDS)
    try:
        path = url.path or "/"
        connection.request(
            "POST", path + (f"?{url.query}" if url.query else ""), delivery.body, delivery.headers
        )
        return connection.getresponse().status
    finally:
        connection.close()
