"""Settings of the development identity provider, a Django project of its own.

Refuses to load unless BERTH_DEBUG=1 and BERTH_DEV_OIDC=1. Its database, signing key and
secret key live in Berth's data dir, next to Berth's own but separate from them.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured

from portal.devidp import REFUSAL, development_enabled

if not development_enabled():
    raise ImproperlyConfigured(REFUSAL)

HERE = Path(__file__).resolve().parent
DATA_DIR = Path(os.environ.get("BERTH_DATA_DIR", HERE.parent.parent / "data")).resolve()
DATA_DIR.mkdir(parents=True, exist_ok=True)

# Where browsers and Berth reach this provider; the issuer is SITE_URL + "/openid".
SITE_URL = os.environ.get("DEVIDP_URL", "http://127.0.0.1:8001").rstrip("/")


def _secret_key() -> str:
    path = DATA_DIR / "devidp-secret-key"
    if not path.exists():
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(secrets.token_urlsafe(50))
    return path.read_text().strip()


DEBUG = True
SECRET_KEY = _secret_key()
ALLOWED_HOSTS = ["127.0.0.1", "localhost", "[::1]", urlsplit(SITE_URL).hostname or "127.0.0.1"]

INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "portal.devidp.apps.OIDCProviderConfig",
]
MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]
ROOT_URLCONF = "portal.devidp.urls"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [HERE / "templates"],  # ours first: the banner on every page
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
            ]
        },
    }
]
DATABASES = {
    "default": {"ENGINE": "django.db.backends.sqlite3", "NAME": DATA_DIR / "devidp.sqlite3"}
}
DEFAULT_AUTO_FIELD = "django.db.models.AutoField"
PASSWORD_HASHERS = ["portal.devidp.hashers.DemoPasswordHasher"]
USE_TZ = True
TIME_ZONE = "UTC"

# Browsers share cookies across ports of one host: Berth on :8000 already uses the defaults.
SESSION_COOKIE_NAME = "devidp_sessionid"
CSRF_COOKIE_NAME = "devidp_csrftoken"
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "index"

# django-oidc-provider
OIDC_USERINFO = "portal.devidp.claims.userinfo"
OIDC_IDTOKEN_SUB_GENERATOR = "portal.devidp.claims.subject"
OIDC_EXTRA_SCOPE_CLAIMS = "portal.devidp.claims.GroupsScopeClaims"
OIDC_IDTOKEN_INCLUDE_CLAIMS = True  # the ID token carries profile, email and groups too
# How long its ID tokens last (django-oidc-provider's default is ten minutes).
OIDC_IDTOKEN_EXPIRE = int(os.environ.get("DEVIDP_ID_TOKEN_SECONDS", "600"))

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": "WARNING"},
}
