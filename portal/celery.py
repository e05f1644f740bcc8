"""The Celery application shared by the web process, workers and beat."""

import gc
import os
from pathlib import Path

from celery import Celery, signals

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")

app = Celery("berth")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@app.on_after_configure.connect
def make_filesystem_broker_folders(sender: Celery, **_: object) -> None:
    # kombu's filesystem transport does not create its own folders.
    options = sender.conf.broker_transport_options or {}
    for key in ("data_folder_in", "data_folder_out", "control_folder"):
        if options.get(key):
            Path(options[key]).mkdir(parents=True, exist_ok=True)


@signals.worker_init.connect
def warm_the_engine(**_: object) -> None:
    """Before the worker takes jobs (and before a prefork pool forks, so its children share
    it): what the first provisioning job would otherwise load on the way."""
    from provisioning.validation import warm

    warm()
    # What is loaded by now (Django, the clients, the schemas) lives as long as the worker:
    # the collector need not walk it on every full collection again, which took a tenth of
    # a provisioning job's CPU (docs/benchmarks.md). Under prefork, frozen before the fork,
    # the children also keep sharing those pages.
    gc.freeze()
