from django.apps import AppConfig


class TenantsConfig(AppConfig):
    name = "tenants"
    verbose_name = "Tenancy"

    def ready(self) -> None:
        from tenants import notifications  # noqa: F401 - connects signal handlers
