from django.contrib.auth.models import AbstractUser
from django.db import models


class User(AbstractUser):
    """A person. Signed-in users are matched by their identity provider's `sub` claim."""

    oidc_subject = models.CharField(
        "OIDC subject",
        max_length=255,
        unique=True,
        null=True,
        blank=True,
        help_text="The identity provider's stable `sub` claim; never matched by e-mail.",
    )
    last_groups = models.JSONField(
        default=list,
        blank=True,
        help_text="The groups claim at the last sign-in; approval rules can refer to it.",
    )
    muted_notifications = models.JSONField(
        default=list,
        blank=True,
        help_text='Request events this person is not e-mailed about (e.g. "ready").',
    )
    is_platform_admin = models.BooleanField(
        default=False,
        help_text="Set from the identity provider's platform-admin groups at each login.",
    )

    class Meta:
        db_table = "tenants_user"

    @property
    def display_name(self) -> str:
        return self.get_full_name() or self.username
