"""Berth settings, read from the environment (12-factor).

Development defaults are safe; production (DEBUG off) refuses to start when a setting
it cannot do without is missing, with a message naming the variable to set. This module
reads the variables; what it builds from them (the API's, logging's and the security
policy's structure, the refusals) is in `portal.config`.
"""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path
from typing import Any

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from portal.config import api, checks, security, workers
from portal.config.environment import env_bool, env_list
from portal.config.observability import logging_config, quiet_loggers

BASE_DIR = Path(__file__).resolve().parent.parent

# Only the development `run` command turns DEBUG on.
DEBUG = env_bool("BERTH_DEBUG")

DATA_DIR = Path(os.environ.get("BERTH_DATA_DIR", BASE_DIR / "data")).resolve()
DATA_DIR.mkdir(parents=True, exist_ok=True)

SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured(
            "SECRET_KEY is not set. Set SECRET_KEY to a long random string "
            f"({checks.RANDOM_STRING_COMMAND})."
        )
    SECRET_KEY = "development-only-insecure-key"  # noqa: S105 - DEBUG only

# Fernet keys for secrets at rest (cluster credentials, repository tokens). Comma-separated:
# the first encrypts, all decrypt, so keys can be rotated.
FERNET_KEYS = env_list("BERTH_FERNET_KEYS")
if not FERNET_KEYS and not DEBUG:
    raise ImproperlyConfigured(
        f"BERTH_FERNET_KEYS is not set. Generate a key with: {checks.FERNET_KEY_COMMAND}"
    )

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1]" if DEBUG else "")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_htmx",
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI's assets, served by the app (no CDN)
    "mozilla_django_oidc",
    "portal",
    "tenants",
    "provisioning",
]

MIDDLEWARE = [
    # First: every later middleware, view and log line sees the request id and is timed.
    "portal.logging.RequestIdMiddleware",
    "portal.metrics.RequestMetricsMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "portal.security.PolicyMiddleware",
    # A control character in a URL's path or query string is a 400 before anything reads it.
    "portal.control_characters.ControlCharacterMiddleware",
    # An API body announced as too long is refused before anything reads it.
    "tenants.api.middleware.BodyLimitMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Last, so it sees the user: nothing a signed-in person was shown is stored by a cache.
    "portal.caching.NoStoreForSignedInMiddleware",
]

ROOT_URLCONF = "portal.urls"
WSGI_APPLICATION = "portal.wsgi.application"
ASGI_APPLICATION = "portal.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "portal.auth.context_processors.identity",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL", f"sqlite:///{DATA_DIR / 'berth.sqlite3'}"),
        conn_max_age=int(os.environ.get("DATABASE_CONN_MAX_AGE", "60")),
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # `make run`'s web server, worker threads and beat share one file: readers beside the
    # writer (WAL), and writers that queue for the lock from the start of a transaction
    # instead of failing to upgrade a read lock ("database is locked").
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        transaction_mode="IMMEDIATE",
        timeout=30,
        init_command="PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL",
    )
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
AUTH_USER_MODEL = "tenants.User"

# --- Identity: OpenID Connect sign-in (mozilla-django-oidc); see docs/oidc.md -------------
# People sign in at the organisation's provider (authorization code flow with PKCE, state
# and nonce); memberships follow their groups. Endpoints are discovered from OIDC_ISSUER
# at the first sign-in (cached); OIDC_OP_*_ENDPOINT override the discovered ones. Without
# OIDC_ISSUER and OIDC_CLIENT_ID, the sign-in page says how to configure it, and only the
# break-glass superuser can sign in (with a password, at /admin/).
OIDC_ISSUER = os.environ.get("OIDC_ISSUER", "")
OIDC_RP_CLIENT_ID = os.environ.get("OIDC_CLIENT_ID", "")
OIDC_RP_CLIENT_SECRET = os.environ.get("OIDC_CLIENT_SECRET", "")
checks.refuse_half_configured_sign_on(
    {
        "OIDC_ISSUER": OIDC_ISSUER,
        "OIDC_CLIENT_ID": OIDC_RP_CLIENT_ID,
        "OIDC_CLIENT_SECRET": OIDC_RP_CLIENT_SECRET,
    }
)
OIDC_RP_SCOPES = os.environ.get("OIDC_SCOPES", "openid email profile groups")
OIDC_GROUPS_CLAIM = os.environ.get("OIDC_GROUPS_CLAIM", "groups")
OIDC_PROVIDER_NAME = os.environ.get("OIDC_PROVIDER_NAME", "single sign-on")
BERTH_PLATFORM_ADMIN_GROUPS = env_list("BERTH_PLATFORM_ADMIN_GROUPS")
OIDC_OP_AUTHORIZATION_ENDPOINT = os.environ.get("OIDC_OP_AUTHORIZATION_ENDPOINT", "")
OIDC_OP_TOKEN_ENDPOINT = os.environ.get("OIDC_OP_TOKEN_ENDPOINT", "")
OIDC_OP_USER_ENDPOINT = os.environ.get("OIDC_OP_USER_ENDPOINT", "")
OIDC_OP_JWKS_ENDPOINT = os.environ.get("OIDC_OP_JWKS_ENDPOINT", "")
OIDC_OP_LOGOUT_ENDPOINT = os.environ.get("OIDC_OP_LOGOUT_ENDPOINT", "")
OIDC_RP_SIGN_ALGO = "RS256"  # verified against the provider's JWKS
OIDC_USE_PKCE = True
OIDC_USE_NONCE = True
OIDC_STORE_ID_TOKEN = True  # the id_token_hint for RP-initiated logout
OIDC_TIMEOUT = int(os.environ.get("OIDC_TIMEOUT", "10"))
OIDC_VERIFY_SSL = env_bool("OIDC_VERIFY_SSL", True)
OIDC_AUTHENTICATE_CLASS = "portal.auth.views.AuthenticateView"
OIDC_CALLBACK_CLASS = "portal.auth.views.CallbackView"
OIDC_OP_LOGOUT_URL_METHOD = "portal.auth.logout.provider_logout_url"
# What kube-apiserver trusts (--oidc-issuer-url, --oidc-client-id, --oidc-username-prefix on
# `sub`, by which access grants bind people): kubeconfigs sign in there; a public client.
KUBE_OIDC_ISSUER_URL = os.environ.get("KUBE_OIDC_ISSUER_URL", OIDC_ISSUER)
KUBE_OIDC_CLIENT_ID = os.environ.get("KUBE_OIDC_CLIENT_ID", OIDC_RP_CLIENT_ID)
KUBE_OIDC_USERNAME_PREFIX = os.environ.get("KUBE_OIDC_USERNAME_PREFIX", "oidc:")
BERTH_CLI_COMMAND = os.environ.get("BERTH_CLI_COMMAND", "berth")
DEPLOY_TOKEN_AUDIENCE = os.environ.get("DEPLOY_TOKEN_AUDIENCE", "")  # "": the API server's
AUTHENTICATION_BACKENDS = [
    "portal.auth.backends.OIDCBackend",
    # Passwords sign in superusers only: the break-glass account for when the provider is down.
    "portal.auth.backends.BreakGlassBackend",
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGIN_REDIRECT_URL_FAILURE = "/login/failed/"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
# Berth keeps no uploads. Named anyway: with no MEDIA_URL, Django's test live server would
# answer every path that names a file of the checkout (/docs/naming.md) with that file.
MEDIA_URL = "media/"
STATICFILES_DIRS = [BASE_DIR / "static"]
# WhiteNoise serves /static/ from the app itself: from STATIC_ROOT where the image ran
# collectstatic (BERTH_STATIC_ROOT), else straight from the source folders.
STATIC_ROOT = Path(os.environ.get("BERTH_STATIC_ROOT", DATA_DIR / "staticfiles"))
if "BERTH_STATIC_ROOT" not in os.environ:
    STATIC_ROOT.mkdir(exist_ok=True)
WHITENOISE_USE_FINDERS = DEBUG or not STATIC_ROOT.is_dir() or not any(STATIC_ROOT.iterdir())

SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SECURE = not DEBUG and env_bool("BERTH_SECURE_COOKIES", True)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
X_FRAME_OPTIONS = "DENY"
CSRF_FAILURE_VIEW = "portal.csrf.csrf_failure"
# HTTP Strict Transport Security on every answer over HTTPS (TLS terminated in front counts:
# SECURE_PROXY_SSL_HEADER). Off in development; BERTH_HSTS_SECONDS=0 turns it off.
SECURE_HSTS_SECONDS = int(os.environ.get("BERTH_HSTS_SECONDS", "0" if DEBUG else "31536000"))
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("BERTH_HSTS_INCLUDE_SUBDOMAINS")
SECURE_HSTS_PRELOAD = env_bool("BERTH_HSTS_PRELOAD")
# Where nothing in front of Berth redirects plain HTTP to HTTPS, Berth does (health checks
# excepted: probes speak HTTP to the pod).
SECURE_SSL_REDIRECT = env_bool("BERTH_SSL_REDIRECT")
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$", r"^metrics$"]
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"

# Content Security Policy (django-csp, portal.security): Berth's own scripts and styles only.
CONTENT_SECURITY_POLICY = security.CONTENT_SECURITY_POLICY

# Celery: the database is the source of truth; the broker only carries "look at request N".
# Without REDIS_URL, the filesystem transport (portal.config.workers): no broker server.
REDIS_URL = os.environ.get("REDIS_URL", "")
BROKER_DIR = DATA_DIR / "broker"
if REDIS_URL:
    CELERY_BROKER_URL = REDIS_URL
    if REDIS_URL.startswith("redis://"):
        # kombu's Redis transport with a repair that keeps a worker alive through a Redis
        # restart (portal/broker.py). rediss:// keeps kombu's own, which sets up its TLS.
        CELERY_BROKER_TRANSPORT = "portal.broker:Transport"
    CELERY_BROKER_TRANSPORT_OPTIONS: dict[str, Any] = {"visibility_timeout": 3600}
else:
    CELERY_BROKER_URL = "filesystem://localhost//"  # kombu warns of a URL without a host
    CELERY_BROKER_TRANSPORT_OPTIONS = workers.filesystem_broker_options(BROKER_DIR)
CELERY_TASK_DEFAULT_QUEUE = os.environ.get("BERTH_QUEUE", "berth")
# A broker that goes away is waited for, forever, at start and while running; a task cut
# off by a lost connection is given back (acks late) and redone (tasks are idempotent).
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_CONNECTION_MAX_RETRIES = None
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Threads: provisioning waits on the API server and git, not the CPU, and one process holds
# one copy of Django (docs/benchmarks.md: 173 MiB against 393 MiB for two prefork children).
CELERY_WORKER_POOL = os.environ.get("BERTH_WORKER_POOL", "threads")
CELERY_TASK_IGNORE_RESULT = True
# Celery's Django fixup would reconnect around every task (a twentieth of a provisioning run
# on PostgreSQL): a connection serves this many tasks, then is reopened (CONN_MAX_AGE holds).
CELERY_DB_REUSE_MAX = int(os.environ.get("BERTH_WORKER_DB_REUSE_MAX", "100"))
CELERY_BEAT_SCHEDULE_FILENAME = str(DATA_DIR / "celerybeat-schedule")
CELERY_TIMEZONE = TIME_ZONE
SWEEP_INTERVAL_SECONDS = float(os.environ.get("BERTH_SWEEP_INTERVAL", "60"))
RECONCILE_INTERVAL_SECONDS = float(os.environ.get("BERTH_RECONCILE_INTERVAL", "300"))
# A truth table is retaken on demand at most this often (it reads the repository and clusters).
BERTH_TRUTH_REFRESH_SECONDS = float(os.environ.get("BERTH_TRUTH_REFRESH_SECONDS", "10"))
# Ephemeral environments: beat's look for expired ones, owners warned ahead, TTLs by default.
EXPIRY_INTERVAL_SECONDS = float(os.environ.get("BERTH_EXPIRY_INTERVAL", "60"))
EXPIRY_WARNING = timedelta(seconds=int(os.environ.get("BERTH_EXPIRY_WARNING_SECONDS", "21600")))
BERTH_EPHEMERAL_DEFAULT_TTL = timedelta(days=1)
BERTH_EPHEMERAL_MAX_TTL = timedelta(days=14)

# Retries of transient API errors; the lease a worker holds on a request or key it works on.
KUBE_MAX_ATTEMPTS = int(os.environ.get("BERTH_KUBE_MAX_ATTEMPTS", "5"))
KUBE_BACKOFF_SECONDS = float(os.environ.get("BERTH_KUBE_BACKOFF_SECONDS", "0.5"))
KUBE_TIMEOUT_SECONDS = float(os.environ.get("BERTH_KUBE_TIMEOUT_SECONDS", "15"))
PROVISIONING_LEASE_SECONDS = float(os.environ.get("BERTH_LEASE_SECONDS", "120"))
# A cluster's drift watcher beats this often; unbeaten for the lease (3 beats at least), its
# cluster goes to another replica and /readyz fails (with the first 0: only reported).
BERTH_READYZ_REQUIRES_WATCHER = env_bool("BERTH_READYZ_REQUIRES_WATCHER", True)
BERTH_WATCH_HEARTBEAT_SECONDS = float(os.environ.get("BERTH_WATCH_HEARTBEAT_SECONDS", "5"))
BERTH_WATCH_LEASE_SECONDS = float(os.environ.get("BERTH_WATCH_LEASE_SECONDS", "30"))
NAMESPACE_TERMINATION_TIMEOUT = float(os.environ.get("BERTH_TERMINATION_TIMEOUT", "300"))
# Once a namespace exists its objects are applied this many at a time (per task).
BERTH_APPLY_CONCURRENCY = int(os.environ.get("BERTH_APPLY_CONCURRENCY", "8"))
# A worker taking an approved request also takes up to this many minus one others approved
# for the same cluster that no worker holds, and provisions them together.
BERTH_PROVISION_BATCH_MAX = int(os.environ.get("BERTH_PROVISION_BATCH_MAX", "20"))
# A cluster or repository unreachable past those retries: the request waits, tried again after
# _RETRY_SECONDS, then after half its wait so far (at most _RETRY_MAX_SECONDS); it fails with
# the reason once it has waited _DEADLINE_SECONDS.
BERTH_OUTAGE_RETRY_SECONDS = float(os.environ.get("BERTH_OUTAGE_RETRY_SECONDS", "15"))
BERTH_OUTAGE_RETRY_MAX_SECONDS = float(os.environ.get("BERTH_OUTAGE_RETRY_MAX_SECONDS", "300"))
BERTH_OUTAGE_DEADLINE_SECONDS = float(os.environ.get("BERTH_OUTAGE_DEADLINE_SECONDS", "3600"))
# A tenant namespace goes only onto a cluster whose guardrails are current (provisioning.
# reconcile.guardrails): a check is trusted this long per cluster, a waiting request retried.
BERTH_GUARDRAILS_CHECK_SECONDS = float(os.environ.get("BERTH_GUARDRAILS_CHECK_SECONDS", "60"))
# A key whose reconcile waits is tried again after this many seconds, doubling up to the max.
BERTH_RECONCILE_RETRY_SECONDS = float(os.environ.get("BERTH_RECONCILE_RETRY_SECONDS", "2"))
BERTH_RECONCILE_RETRY_MAX_SECONDS = float(os.environ.get("BERTH_RECONCILE_RETRY_MAX", "300"))

# GitOps writer (docs/gitops-layout.md): its commits' identity, git's retries, the pauses
# GitHub asks of integrations, the image a Kargo Warehouse watches until the team owns it.
BERTH_GIT_AUTHOR_NAME = os.environ.get("BERTH_GIT_AUTHOR_NAME", "Berth")
BERTH_GIT_AUTHOR_EMAIL = os.environ.get("BERTH_GIT_AUTHOR_EMAIL", "berth@localhost")
BERTH_GIT_MAX_ATTEMPTS = int(os.environ.get("BERTH_GIT_MAX_ATTEMPTS", "5"))
BERTH_GIT_BACKOFF_SECONDS = float(os.environ.get("BERTH_GIT_BACKOFF_SECONDS", "1"))
BERTH_GIT_TIMEOUT_SECONDS = float(os.environ.get("BERTH_GIT_TIMEOUT_SECONDS", "60"))
BERTH_GITHUB_PAUSE_SECONDS = float(os.environ.get("BERTH_GITHUB_PAUSE_SECONDS", "0.25"))
BERTH_GITHUB_WRITE_PAUSE_SECONDS = float(os.environ.get("BERTH_GITHUB_WRITE_PAUSE_SECONDS", "1"))
BERTH_GIT_LOCK_TIMEOUT_SECONDS = float(os.environ.get("BERTH_GIT_LOCK_TIMEOUT_SECONDS", "60"))
# http://, git:// and file:// repository URLs (tenants.gitrepo): unencrypted, or any
# repository on Berth's own disk. Off unless an operator turns it on; `make run` does.
BERTH_GIT_ALLOW_INSECURE = env_bool("BERTH_GIT_ALLOW_INSECURE")
# A git command run by a web process (a page or API call reading a repository) is killed
# after this long, whatever the transport: a request must never outlast gunicorn's timeout.
BERTH_GIT_WEB_TIMEOUT_SECONDS = float(os.environ.get("BERTH_GIT_WEB_TIMEOUT_SECONDS", "5"))
# Requests of one repository waiting for its writer go out in one push, this many at most.
BERTH_GITOPS_BATCH_MAX = int(os.environ.get("BERTH_GITOPS_BATCH_MAX", "20"))
BERTH_GITOPS_IMAGE_REPOSITORY = os.environ.get(
    "BERTH_GITOPS_IMAGE_REPOSITORY", "registry.example.com/{tenant}/{app}"
)

# Outbound connections for tenants (webhooks, GitOps repositories; tenants.egress) go only to
# public addresses: never loopback, link-local (cloud metadata), private, reserved or Berth's
# own, unless the network is listed here (comma-separated CIDRs, e.g. 10.20.0.0/16 for an
# in-house forge). `make run` allows loopback: its repositories and receivers are local.
BERTH_EGRESS_ALLOW = env_list("BERTH_EGRESS_ALLOW")
checks.refuse_malformed_networks(BERTH_EGRESS_ALLOW)

# Showback's measured usage (tenants.usage): a Prometheus-compatible endpoint under the egress
# policy above (unset: allocation only), and the step of the daily history's range queries.
BERTH_PROMETHEUS_URL = os.environ.get("BERTH_PROMETHEUS_URL", "").strip()
BERTH_USAGE_STEP_SECONDS = int(os.environ.get("BERTH_USAGE_STEP_SECONDS", "300"))

# Notifications: links in e-mails and webhooks point here.
BERTH_BASE_URL = os.environ.get("BERTH_BASE_URL", "http://127.0.0.1:8000").rstrip("/")
EMAIL_BACKEND = os.environ.get(
    "EMAIL_BACKEND",
    "django.core.mail.backends.console.EmailBackend"
    if DEBUG
    else "django.core.mail.backends.smtp.EmailBackend",
)
EMAIL_HOST = os.environ.get("EMAIL_HOST", "localhost")
EMAIL_PORT = int(os.environ.get("EMAIL_PORT", "25"))
EMAIL_HOST_USER = os.environ.get("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = os.environ.get("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS")
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "Berth <berth@localhost>")

# Berth's own namespace on managed clusters; never handed to a tenant.
BERTH_NAMESPACE = os.environ.get("BERTH_NAMESPACE", "berth-system")

# --- REST API: /api/v1/ (tenants.api, portal.config.api), docs/api.md ----------------------
# The audience access tokens for the API must name (portal.auth.api): not Berth's client id,
# so that no ID token is an API credential. Unset, only tokens typed at+jwt (RFC 9068) for
# Berth's client id are accepted. OIDC_API_ACCEPT_CLIENT_AUDIENCE=1 also accepts untyped
# tokens whose only audience is the client id (a provider that cannot mint another).
OIDC_API_AUDIENCE = os.environ.get("OIDC_API_AUDIENCE", "")
OIDC_API_ACCEPT_CLIENT_AUDIENCE = os.environ.get("OIDC_API_ACCEPT_CLIENT_AUDIENCE", "") == "1"
# The longest body the API reads (bytes); longer is 413 Payload Too Large.
BERTH_API_MAX_BODY_BYTES = int(os.environ.get("BERTH_API_MAX_BODY_BYTES", str(1024 * 1024)))
# Requests per token (per user for sessions and access tokens, per address for anonymous).
BERTH_API_RATE = os.environ.get("BERTH_API_RATE", "600/min")
REST_FRAMEWORK = api.rest_framework_settings(
    num_proxies=int(os.environ.get("BERTH_NUM_PROXIES", "0"))
)
SPECTACULAR_SETTINGS = api.SPECTACULAR_SETTINGS

# The cache holds API throttling counters: shared in Redis when REDIS_URL is set.
CACHES = api.cache_settings(
    location=os.environ.get("BERTH_CACHE_URL", REDIS_URL) if REDIS_URL else ""
)

# --- Observability: logs and metrics (docs/operations.md) ----------------------------------
# One JSON object per line (plain text under DEBUG unless BERTH_LOG_FORMAT says otherwise),
# each with the request id; secrets redacted on the handler; BERTH_LOG_QUIET: warnings only.
LOG_FORMAT = os.environ.get("BERTH_LOG_FORMAT", "plain" if DEBUG else "json")
LOGGING = logging_config(log_format=LOG_FORMAT, level=os.environ.get("BERTH_LOG_LEVEL", "INFO"))
LOGGING["loggers"].update(quiet_loggers(os.environ.get("BERTH_LOG_QUIET", "")))
# Celery workers log through the same handler instead of replacing it with their own.
CELERY_WORKER_HIJACK_ROOT_LOGGER = False

# Counters and histograms are observed in many processes (gunicorn and Celery workers) and
# summed from prometheus_client's multiprocess files; set before prometheus_client is
# imported. Figures from the database are read at scrape time.
os.environ.setdefault("PROMETHEUS_MULTIPROC_DIR", str(DATA_DIR / "prometheus"))
Path(os.environ["PROMETHEUS_MULTIPROC_DIR"]).mkdir(parents=True, exist_ok=True)
# When set, GET /metrics needs "Authorization: Bearer <token>".
METRICS_TOKEN = os.environ.get("BERTH_METRICS_TOKEN", "")
# A Celery worker serves its own /metrics on this port (when its pod has its own data dir).
WORKER_METRICS_PORT = int(os.environ.get("BERTH_WORKER_METRICS_PORT", "0"))

CELERY_BEAT_SCHEDULE = workers.beat_schedule(
    sweep=SWEEP_INTERVAL_SECONDS,
    reconcile=RECONCILE_INTERVAL_SECONDS,
    expiry=EXPIRY_INTERVAL_SECONDS,
)

# --- Production guard (keep this block last: it checks the settings above) -----------------
# Production is DEBUG off, or BERTH_ENV=production (which then refuses DEBUG on). Berth
# refuses to start there with a development setting, saying what to set instead.
BERTH_ENV = os.environ.get("BERTH_ENV", "").strip().lower()
if not DEBUG or BERTH_ENV == "production":
    checks.refuse_to_start_in_production(
        checks.production_problems(
            debug=DEBUG,
            secret_key=SECRET_KEY,
            fernet_keys=FERNET_KEYS,
            dev_oidc=env_bool("BERTH_DEV_OIDC"),
        )
    )
