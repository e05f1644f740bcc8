from django.apps import AppConfig


class PortalConfig(AppConfig):
    name = "portal"
    verbose_name = "Berth portal"

    def ready(self) -> None:
        from portal import logging as _logging  # noqa: F401 - connects Celery log context
        from portal import metrics

        metrics.connect()
