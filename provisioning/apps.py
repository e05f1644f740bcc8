from django.apps import AppConfig


class ProvisioningConfig(AppConfig):
    name = "provisioning"
    verbose_name = "Provisioning"

    def ready(self) -> None:
        from provisioning import receivers  # noqa: F401 - connects signal handlers
        from provisioning.previews import Previews
        from tenants import provisioner

        provisioner.register(Previews())
