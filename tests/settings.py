"""Settings for the test suite: the real settings, with test-only secrets and a private data dir.

Runs on SQLite with no broker server unless DATABASE_URL / REDIS_URL are set.
"""

import os
import tempfile
from pathlib import Path

os.environ.setdefault("SECRET_KEY", "test-only-secret-key-not-for-production")
# A fixed, test-only Fernet key so encrypted fields are exercised exactly as in production.
os.environ.setdefault("BERTH_FERNET_KEYS", "q8Qh7Jqg0r4mX2eQnYV1m1cVt9C9bq0z6xk3h8W5e3k=")
# Each test process has a data dir, a metrics dir and a queue of its own (the processes a test
# starts, such as a Celery worker, are handed them: tests/support/integration.py), so stray
# messages never collide. A pytest-xdist worker inherits the environment of the run that
# started it, and takes its own here, once.
_XDIST_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
if os.environ.get("BERTH_TEST_PROCESS") != _XDIST_WORKER or "BERTH_QUEUE" not in os.environ:
    os.environ["BERTH_TEST_PROCESS"] = _XDIST_WORKER
    os.environ["BERTH_DATA_DIR"] = tempfile.mkdtemp(prefix=f"berth-test-{_XDIST_WORKER}")
    os.environ["BERTH_QUEUE"] = f"berth-test-{os.getpid()}"
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = os.path.join(
        os.environ["BERTH_DATA_DIR"], "prometheus"
    )
# The tests' git servers are local: git daemon (git://), http-backend (http://), file://.
# Set in the environment so the worker processes some tests start have it too.
os.environ.setdefault("BERTH_GIT_ALLOW_INSECURE", "1")
# The upstream Argo CD, Kargo and Flux CRDs lie beside Berth's own checkouts, not in a clone:
# used when there; tests marked `crds` skip without them (tests/conftest.py).
_UPSTREAM_CRDS = Path(__file__).resolve().parents[2] / "shared" / "crds"
if _UPSTREAM_CRDS.is_dir():
    os.environ.setdefault("BERTH_CRD_DIR", str(_UPSTREAM_CRDS))
# The stand-in's CRDs (kubesandbox.testing) come from the same place: a cluster never serves
# kinds the schema checks cannot read.
os.environ.setdefault("KUBESANDBOX_CRD_DIR", os.environ.get("BERTH_CRD_DIR") or str(_UPSTREAM_CRDS))

from portal.settings import *  # noqa: E402, F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
# Test processes running side by side share one Redis: each keeps its cache under its own
# prefix (a review cached for request 5 of one test database is not another's request 5).
if CACHES["default"].get("KEY_PREFIX"):  # noqa: F405
    CACHES["default"]["KEY_PREFIX"] = f"berth-test-{os.environ['BERTH_QUEUE']}"  # noqa: F405
# Each test client builds the middleware again; WhiteNoise would walk every static folder
# each time. Finding a file when it is asked for answers the same.
WHITENOISE_AUTOREFRESH = True
SESSION_COOKIE_SECURE = False
CSRF_COOKIE_SECURE = False
ALLOWED_HOSTS = ["testserver", "localhost", "127.0.0.1"]
# The suite's git servers, webhook receivers and stand-in listen on loopback; the egress
# tests (tests/security/test_egress_*.py) take this away to see refusals.
BERTH_EGRESS_ALLOW = ["127.0.0.0/8", "::1/128"]
# Threads of the live server must not keep connections open past the test database.
DATABASES["default"]["CONN_MAX_AGE"] = 0  # noqa: F405

# Provisioning retries back off in milliseconds here, not seconds.
KUBE_BACKOFF_SECONDS = 0.01
KUBE_TIMEOUT_SECONDS = 5.0
NAMESPACE_TERMINATION_TIMEOUT = 10.0
# The forge stand-in on loopback is not github.com: no pauses between its calls.
BERTH_GITHUB_PAUSE_SECONDS = BERTH_GITHUB_WRITE_PAUSE_SECONDS = 0.0
# Most tests want an unreachable cluster or repository to fail the request at once; the
# tests of waiting out an outage set a deadline
# (tests/provisioning/jobs/test_engine_cluster_access.py,
# tests/provisioning/gitops/test_gitops_outages.py), and the fault suite's worker processes
# get theirs from the environment (tests/system/test_faults_*.py).
if "BERTH_OUTAGE_DEADLINE_SECONDS" not in os.environ:
    BERTH_OUTAGE_DEADLINE_SECONDS = 0.0
