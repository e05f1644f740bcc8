from django.apps import AppConfig


class TenantsConfig(AppConfig):
    name = "tenants"
    verbose_name = "Tenancy"

    def ready(self) -> None:
        from tenants import receivers  # noqa: F401 - connects signal handlers
