"""`Idempotency-Key` on POST: a retried request is answered, not done again.

The first POST with a key (per user) records a fingerprint of the request (method, path and
the canonical JSON of the body) before the view runs, and its answer (status, body,
Location) after. Then, for 24 hours, the same key:

- with the same request → the recorded answer, replayed (`Idempotent-Replayed: true`);
- with a different request → 422 (idempotency-key-reused);
- while the first is still being answered → 409 (idempotency-key-in-use).

Server errors (5xx) are not recorded: the key is released so the client can retry. A key
whose first request never finished (a killed process) is taken over after IN_FLIGHT_TIMEOUT.
"""

from __future__ import annotations

import hashlib
import json
from datetime import timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone
from rest_framework import exceptions
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from tenants.api.exceptions import PROBLEM_CONTENT_TYPE, Conflict, Unprocessable
from tenants.models import IdempotencyRecord

HEADER = "Idempotency-Key"
REPLAYED_HEADER = "Idempotent-Replayed"
KEPT_FOR = timedelta(hours=24)
IN_FLIGHT_TIMEOUT = timedelta(minutes=2)
MAX_KEY_LENGTH = 255
REPLAYED_RESPONSE_HEADERS = ("Location",)


class Replay(Exception):
    """Raised before the view runs: answer with the recorded response instead."""

    def __init__(self, response: Response) -> None:
        super().__init__("replay")
        self.response = response


def fingerprint(request: Request) -> str:
    canonical = json.dumps(
        {"method": request.method, "path": request.get_full_path(), "body": request.data},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


def _key(request: Request) -> str:
    key = request.headers[HEADER].strip()
    if not key or len(key) > MAX_KEY_LENGTH or not (key.isascii() and key.isprintable()):
        raise exceptions.ValidationError(
            {HEADER: [f"Use 1 to {MAX_KEY_LENGTH} printable ASCII characters, e.g. a UUID."]}
        )
    return key


def begin(request: Request) -> IdempotencyRecord | None:
    """Claim the key for this request, or raise Replay / Conflict / Unprocessable."""
    if request.method != "POST" or HEADER not in request.headers:
        return None
    key, print_ = _key(request), fingerprint(request)
    now = timezone.now()
    IdempotencyRecord.objects.filter(user=request.user, created_at__lt=now - KEPT_FOR).delete()
    for _ in range(2):
        try:
            with transaction.atomic():
                return IdempotencyRecord.objects.create(
                    user=request.user, key=key, fingerprint=print_, created_at=now
                )
        except IntegrityError:
            existing = IdempotencyRecord.objects.filter(user=request.user, key=key).first()
        if existing is None:
            continue  # expired and deleted meanwhile: claim it again
        if existing.fingerprint != print_:
            raise Unprocessable(
                f"The Idempotency-Key {key!r} was used with a different request in the last "
                "24 hours; use a new key for a new request.",
                problem="idempotency-key-reused",
            )
        if existing.status_code is not None:
            raise Replay(_replay(existing))
        abandoned = IdempotencyRecord.objects.filter(
            pk=existing.pk,
            status_code__isnull=True,
            created_at=existing.created_at,
            created_at__lt=now - IN_FLIGHT_TIMEOUT,
        ).update(created_at=now)
        if abandoned:
            existing.created_at = now
            return existing
        raise Conflict(
            f"A request with the Idempotency-Key {key!r} is still being processed; retry "
            "when it has finished.",
            problem="idempotency-key-in-use",
        )
    raise Conflict(
        "The Idempotency-Key could not be claimed; retry.", problem="idempotency-key-in-use"
    )


def _replay(record: IdempotencyRecord) -> Response:
    headers: dict[str, Any] = {
        name: value
        for name, value in record.response_headers.items()
        if name in REPLAYED_RESPONSE_HEADERS
    }
    headers[REPLAYED_HEADER] = "true"
    return Response(
        json.loads(record.response_body) if record.response_body else None,
        status=record.status_code,
        headers=headers,
        content_type=record.response_headers.get("content_type"),
    )


def finish(record: IdempotencyRecord | None, response: Response) -> None:
    """Record the answer to replay, or release the key after a server error."""
    if record is None:
        return
    if response.status_code >= 500:
        release(record)
        return
    body = ""
    if getattr(response, "data", None) is not None:
        body = JSONRenderer().render(response.data).decode()
    headers = {name: response[name] for name in REPLAYED_RESPONSE_HEADERS if name in response}
    if response.content_type == PROBLEM_CONTENT_TYPE:
        headers["content_type"] = PROBLEM_CONTENT_TYPE
    IdempotencyRecord.objects.filter(pk=record.pk).update(
        status_code=response.status_code,
        response_body=body,
        response_headers=headers,
        completed_at=timezone.now(),
    )


def release(record: IdempotencyRecord | None) -> None:
    if record is not None:
        IdempotencyRecord.objects.filter(pk=record.pk, status_code__isnull=True).delete()


class IdempotentMixin:
    """For API views: POSTs honour `Idempotency-Key` (after authentication, permissions and
    throttling, so a refused request claims no key)."""

    _idempotency: IdempotencyRecord | None = None

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)  # type: ignore[misc]
        self._idempotency = begin(request)

    def handle_exception(self, exc: Exception) -> Response:
        if isinstance(exc, Replay):
            return exc.response
        try:
            return super().handle_exception(exc)  # type: ignore[misc]
        except Exception:
            release(self._idempotency)
            self._idempotency = None
            raise

    def finalize_response(
        self, request: Request, response: Response, *args: Any, **kwargs: Any
    ) -> Response:
        response = super().finalize_response(request, response, *args, **kwargs)  # type: ignore[misc]
        record, self._idempotency = self._idempotency, None
        finish(record, response)
        return response
