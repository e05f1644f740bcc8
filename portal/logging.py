"""Structured logs: one JSON object a line, each carrying the request it belongs to, no secrets.

- `RequestIdMiddleware` takes the caller's `X-Request-ID` (at most 128 of `[A-Za-z0-9._-]`,
  anything else is replaced) or makes a uuid4, keeps it in a context variable for the
  request's duration, returns it as `X-Request-ID`, and writes one access-log line.
- `ContextFilter` puts that id (`request_id`), and in Celery tasks the tenancy request's pk
  (`tenancy_request`), the task name and id, on every log record. The HTTP request id also
  travels with the Celery messages the request sends, so a worker's lines about an approval
  carry the id of the HTTP request that approved it.
- `RedactSecretsFilter` replaces secrets with `[REDACTED]`: the values of Berth's secret
  settings (SECRET_KEY, Fernet keys, OIDC client secret, database and Redis passwords, the
  metrics token) wherever they appear, plus anything that looks like one (passwords in URLs,
  bearer tokens, JWTs such as ServiceAccount tokens, `token=`/`password:` pairs) - in the
  message, its arguments, the traceback and extra fields.
- `JsonFormatter` / `PlainFormatter`: `BERTH_LOG_FORMAT=json|plain` chooses one in settings.

Named after the stdlib module on purpose (`portal.logging`); absolute imports keep them apart.
"""

from __future__ import annotations

import contextvars
import datetime
import functools
import logging
import re
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import Any
from urllib.parse import urlsplit

from celery import signals as celery_signals
from django.core.signals import request_finished, setting_changed
from django.dispatch import receiver
from django.http import HttpRequest, HttpResponse
from pythonjsonlogger.json import JsonFormatter as _BaseJsonFormatter

REQUEST_ID_HEADER = "X-Request-ID"
# What Berth accepts from a caller (a proxy or load balancer usually sets it).
VALID_REQUEST_ID = re.compile(r"[A-Za-z0-9._-]{1,128}")
# Probes and scrapes come every few seconds: their access lines are DEBUG, not INFO.
QUIET_PATHS = frozenset({"/healthz", "/readyz", "/metrics"})
REDACTED = "[REDACTED]"

request_id_var: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="")
tenancy_request_var: contextvars.ContextVar[int | None] = contextvars.ContextVar(
    "tenancy_request", default=None
)
task_var: contextvars.ContextVar[tuple[str, str] | None] = contextvars.ContextVar(
    "celery_task", default=None
)

access_log = logging.getLogger("berth.access")


def valid_request_id(value: str | None) -> str | None:
    return value if value and VALID_REQUEST_ID.fullmatch(value) else None


def new_request_id() -> str:
    return uuid.uuid4().hex


@contextmanager
def bound(*, request_id: str | None = None, tenancy_request: int | None = None) -> Iterator[None]:
    """Log lines inside carry these ids (for code that is neither a view nor a task)."""
    tokens = []
    if request_id is not None:
        tokens.append((request_id_var, request_id_var.set(request_id)))
    if tenancy_request is not None:
        tokens.append((tenancy_request_var, tenancy_request_var.set(tenancy_request)))
    try:
        yield
    finally:
        for var, token in reversed(tokens):
            var.reset(token)


class RequestIdMiddleware:
    """First in MIDDLEWARE: everything below it, and its access line, sees the id."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        request_id = valid_request_id(request.headers.get(REQUEST_ID_HEADER)) or new_request_id()
        request.request_id = request_id  # type: ignore[attr-defined]
        # Cleared when the response is closed (request_finished), not here: Django logs
        # 4xx and 5xx responses after the middleware has returned.
        request_id_var.set(request_id)
        started = time.perf_counter()
        response = self.get_response(request)
        response[REQUEST_ID_HEADER] = request_id
        self._log(request, response.status_code, time.perf_counter() - started)
        return response

    @staticmethod
    def _log(request: HttpRequest, status: int, seconds: float) -> None:
        match = getattr(request, "resolver_match", None)
        level = logging.DEBUG if request.path in QUIET_PATHS else logging.INFO
        access_log.log(
            level,
            "%s %s %s",
            request.method,
            request.path,
            status,
            extra={
                "method": request.method,
                "path": request.path,
                "status": status,
                "duration_ms": round(seconds * 1000, 1),
                "view": match.view_name if match else "",
            },
        )


@receiver(request_finished)
def _forget_request_id(**_: object) -> None:
    request_id_var.set("")


class ContextFilter(logging.Filter):
    """Adds `request_id` (and in tasks `tenancy_request`, `task`, `task_id`) to each record."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not getattr(record, "request_id", None):
            record.request_id = request_id_var.get() or "-"
        tenancy_request = tenancy_request_var.get()
        if tenancy_request is not None and not hasattr(record, "tenancy_request"):
            record.tenancy_request = tenancy_request
        task = task_var.get()
        if task is not None and not hasattr(record, "task"):
            record.task, record.task_id = task
        return True


# --- secrets -----------------------------------------------------------------------------

_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    # scheme://user:password@host -> keep the user and host, drop the password
    (re.compile(r"(\b[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@\"]*:)([^/\s@\"]+)(@)"), rf"\1{REDACTED}\3"),
    # Bearer <token>; Authorization: Basic <credentials>
    (re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]{8,}"), rf"\1{REDACTED}"),
    (re.compile(r"(?i)\b(authorization[\"']?\s*[:=]\s*[\"']?basic\s+)\S+"), rf"\1{REDACTED}"),
    # JWTs: ServiceAccount tokens, ID tokens, access tokens
    (re.compile(r"\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*"), REDACTED),
    # password=..., "client_secret": "...", token: ..., client-key-data: ... (also in reprs)
    (
        re.compile(
            r"(?i)\b([\w-]*(?:password|passwd|secret|token|api[_-]?key|key-data)[\"']?"
            r"\s*[:=]\s*[\"']?)(?!\[REDACTED\])([^\s\"',;&}\]]+)"
        ),
        rf"\1{REDACTED}",
    ),
)


@functools.cache
def known_secrets() -> tuple[str, ...]:
    """The values of Berth's secret settings, longest first (so none is half-replaced)."""
    from django.conf import settings

    if not settings.configured:
        return ()
    values: list[str] = [settings.SECRET_KEY, *getattr(settings, "SECRET_KEY_FALLBACKS", [])]
    values += getattr(settings, "FERNET_KEYS", [])
    values += [
        getattr(settings, "OIDC_RP_CLIENT_SECRET", ""),
        getattr(settings, "METRICS_TOKEN", ""),
    ]
    for database in getattr(settings, "DATABASES", {}).values():
        values.append(database.get("PASSWORD") or "")
    for url in (getattr(settings, "REDIS_URL", ""), getattr(settings, "CELERY_BROKER_URL", "")):
        with suppress(ValueError):
            values.append(urlsplit(url).password or "")
    # Short values would redact ordinary words; real secrets are long.
    return tuple(sorted({v for v in values if v and len(v) >= 6}, key=len, reverse=True))


@receiver(setting_changed)
def _forget_known_secrets(**_: object) -> None:
    known_secrets.cache_clear()


def redact(text: str) -> str:
    for secret in known_secrets():
        if secret in text:
            text = text.replace(secret, REDACTED)
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text


_STANDARD_ATTRIBUTES = frozenset(vars(logging.makeLogRecord({}))) | {"message", "asctime"}


class RedactSecretsFilter(logging.Filter):
    """On the handler, so it sees every record, whichever logger it came from."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:
            message = str(record.msg)
        record.msg, record.args = redact(message), ()
        if record.exc_info:
            if not record.exc_text:
                record.exc_text = logging.Formatter().formatException(record.exc_info)
            # Formatters (the JSON one included) use exc_text when exc_info is gone.
            record.exc_info = None
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        for name, value in list(vars(record).items()):
            if name not in _STANDARD_ATTRIBUTES and isinstance(value, str):
                setattr(record, name, redact(value))
        return True


# --- formatters --------------------------------------------------------------------------


class JsonFormatter(_BaseJsonFormatter):
    """`{"time", "level", "logger", "message", "request_id", ...extra}`, one per line."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("fmt", "{asctime}{levelname}{name}{message}")
        kwargs.setdefault("style", "{")
        kwargs.setdefault(
            "rename_fields", {"asctime": "time", "levelname": "level", "name": "logger"}
        )
        super().__init__(*args, **kwargs)

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        return _iso_time(record)

    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))  # the last net: extras that were not strings


def _iso_time(record: logging.LogRecord) -> str:
    moment = datetime.datetime.fromtimestamp(record.created, tz=datetime.UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


class PlainFormatter(logging.Formatter):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("fmt", "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s")
        super().__init__(*args, **kwargs)

    def format(self, record: logging.LogRecord) -> str:
        if not hasattr(record, "request_id"):
            record.request_id = "-"
        return redact(super().format(record))


# --- Celery: carry the ids into tasks ----------------------------------------------------

HEADER = "berth_request_id"


@celery_signals.before_task_publish.connect(weak=False)
def _send_request_id(headers: dict[str, Any] | None = None, **_: object) -> None:
    request_id = request_id_var.get()
    if headers is not None and request_id:
        headers.setdefault(HEADER, request_id)


def _tenancy_request_of(task: Any, args: tuple, kwargs: dict) -> int | None:
    """The `request_id` argument of a task, by name or position, when it has one."""
    if "request_id" in kwargs:
        value = kwargs["request_id"]
    else:
        import inspect

        try:
            value = inspect.signature(task.run).bind_partial(*args).arguments.get("request_id")
        except (TypeError, ValueError):
            value = None
    return value if isinstance(value, int) else None


_task_tokens: dict[str, list] = {}
_DEFAULTS: dict[str, Any] = {"request_id": "", "tenancy_request": None, "celery_task": None}


@celery_signals.task_prerun.connect(weak=False)
def _bind_task_context(
    task_id: str = "",
    task: Any = None,
    args: tuple = (),
    kwargs: dict | None = None,
    **_: object,
) -> None:
    if task is None:
        return
    # A worker puts a message's custom headers on the request; Task.apply keeps them apart.
    sent = getattr(task.request, HEADER, None) or (task.request.headers or {}).get(HEADER)
    sent_id = valid_request_id(sent)
    tokens = [
        (request_id_var, request_id_var.set(sent_id or task_id)),
        (task_var, task_var.set((task.name, task_id))),
    ]
    tenancy_request = _tenancy_request_of(task, tuple(args or ()), dict(kwargs or {}))
    if tenancy_request is not None:
        tokens.append((tenancy_request_var, tenancy_request_var.set(tenancy_request)))
    _task_tokens[task_id] = tokens


@celery_signals.task_postrun.connect(weak=False)
def _unbind_task_context(task_id: str = "", **_: object) -> None:
    for var, token in reversed(_task_tokens.pop(task_id, [])):
        try:
            var.reset(token)
        except ValueError:  # set in another context (a thread pool): back to the default
            var.set(_DEFAULTS[var.name])
