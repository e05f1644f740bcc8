"""What a failed call to a cluster means, in words people read, and whether it is worth
trying again: transient failures (429, 5xx, timeouts, refused connections) are retried
with exponential backoff and jitter; anything else fails at once with the API server's own
message."""

from __future__ import annotations

import json
import logging
import socket
import ssl
from dataclasses import dataclass

import urllib3
from kubernetes.client.exceptions import ApiException
from tenacity import (
    RetryError,
    Retrying,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential_jitter,
)

logger = logging.getLogger(__name__)

TRANSIENT_STATUSES = {429, 500, 502, 503, 504}


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 5
    initial_seconds: float = 0.5
    max_seconds: float = 10.0
    timeout_seconds: float = 15.0


class KubeError(Exception):
    """The API refused or never answered; `message` is what a person should read."""

    def __init__(
        self, message: str, *, status: int | None, transient: bool, attempts: int = 1
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.transient = transient
        self.attempts = attempts


def _speaks_tls(url: str) -> bool:
    """Whether the server at an http:// URL answers a TLS handshake: then the URL is wrong,
    and no retry will help."""
    parts = urllib3.util.parse_url(url)
    if parts.scheme != "http" or not parts.host:
        return False
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    try:
        with (
            socket.create_connection((parts.host, parts.port or 80), timeout=3) as raw,
            context.wrap_socket(raw, server_hostname=parts.host),
        ):
            return True
    except OSError:  # ssl.SSLError included: not TLS, or not there at all
        return False


def describe(exc: BaseException, url: str = "") -> KubeError:
    if isinstance(exc, ApiException):
        detail = exc.reason or ""
        try:
            body = json.loads(exc.body or "{}")
            detail = body.get("message") or detail
        except (TypeError, ValueError):
            pass
        status = exc.status or 0
        transient = status in TRANSIENT_STATUSES or status == 0
        return KubeError(f"{status} {detail}".strip(), status=status, transient=transient)
    if isinstance(exc, urllib3.exceptions.ProtocolError) and _speaks_tls(url):
        exc = ValueError("Host value should start with https://")
    if isinstance(exc, (urllib3.exceptions.HTTPError, TimeoutError, ConnectionError)):
        # People read this; the address and the library's wording go to the log only.
        logger.warning("cluster API unreachable: %s: %s", type(exc).__name__, exc)
        return KubeError(
            f"cluster unreachable: {_unreachable_cause(exc)}", status=None, transient=True
        )
    if isinstance(exc, ValueError):
        # The client refuses the cluster's settings (discovery: an http:// URL to an HTTPS
        # server; a kubeconfig it cannot use): nothing heals that but a platform admin.
        logger.warning("cluster settings refused by the client: %s", exc)
        hint = (
            "its API URL must start with https://, the server speaks HTTPS"
            if "should start with https://" in str(exc)
            else "the client cannot use them"
        )
        return KubeError(
            f"the cluster's settings are not valid: {hint}; a platform admin "
            "must correct the cluster in Berth",
            status=None,
            transient=False,
        )
    raise exc


def _unreachable_cause(exc: BaseException) -> str:
    """Why the API server did not answer, in words that name no address."""
    reason = getattr(exc, "reason", None) or exc
    text = f"{type(reason).__name__} {reason}".lower()
    if "refused" in text:
        return "the API server refused the connection (is it running?)"
    if "timed out" in text or "timeout" in text:
        return "the API server did not answer in time"
    if "name or service not known" in text or "resolution" in text or "nodename" in text:
        return "the API server's name does not resolve"
    if "ssl" in text or "certificate" in text:
        return "the TLS handshake with the API server failed (check its CA certificate)"
    return "the connection to the API server failed"


def _is_transient(exc: BaseException) -> bool:
    if isinstance(exc, ApiException):
        return (exc.status or 0) in TRANSIENT_STATUSES
    return isinstance(exc, (urllib3.exceptions.HTTPError, TimeoutError, ConnectionError))


def with_retries(policy: RetryPolicy, call, *, url: str = ""):
    """Run `call` with retries on transient errors; return (result, attempts)."""
    retrying = Retrying(
        retry=retry_if_exception(_is_transient),
        stop=stop_after_attempt(policy.attempts),
        wait=wait_exponential_jitter(
            multiplier=policy.initial_seconds, max=policy.max_seconds, jitter=policy.initial_seconds
        ),
        reraise=False,
    )
    attempt_number = 0
    try:
        for attempt in retrying:
            with attempt:
                attempt_number = attempt.retry_state.attempt_number
                result = call()
            if not attempt.retry_state.outcome.failed:
                return result, attempt_number
    except RetryError as exhausted:
        error = describe(exhausted.last_attempt.exception(), url)
        error.attempts = attempt_number
        raise error from None
    except Exception as exc:
        error = describe(exc, url)
        error.attempts = attempt_number
        raise error from exc
    raise AssertionError("unreachable")  # pragma: no cover
