from oidc_provider.apps import OIDCProviderConfig as UpstreamConfig


class OIDCProviderConfig(UpstreamConfig):
    # django-oidc-provider's migrations use AutoField; saying so keeps Django from wanting a
    # new migration inside site-packages.
    default_auto_field = "django.db.models.AutoField"
