"""Rotating BERTH_FERNET_KEYS: a new first key, `reencrypt_secrets`, then the old key can go."""

import io

import pytest
from django.core.management import CommandError, call_command
from django.test import override_settings

from tenants.models import Cluster
from tests.support.factories import ClusterFactory

TOKEN = "eyJhbGciOiJSUzI1NiJ9.cluster-token-value"
NEW_KEY = "Zm9vYmFyYmF6cXV4cXV1eGZvb2JhcmJhenF1eHF1dXg="


@pytest.mark.django_db
def test_after_reencrypting_the_old_key_is_no_longer_needed(settings):
    cluster = ClusterFactory(credentials=TOKEN)
    output = io.StringIO()

    with override_settings(FERNET_KEYS=[NEW_KEY, *settings.FERNET_KEYS]):
        call_command("reencrypt_secrets", stdout=output)

    with override_settings(FERNET_KEYS=[NEW_KEY]):
        assert Cluster.objects.get(pk=cluster.pk).credentials == TOKEN
    assert "tenants.Cluster: 1 row(s) re-encrypted" in output.getvalue()


@pytest.mark.django_db
def test_a_secret_no_key_decrypts_stops_the_command_and_changes_nothing(settings):
    ClusterFactory(credentials=TOKEN)
    before = list(Cluster.objects.values_list("pk", flat=True))

    with (
        override_settings(FERNET_KEYS=[NEW_KEY]),
        pytest.raises(CommandError, match="tenants.Cluster .*Nothing was changed"),
    ):
        call_command("reencrypt_secrets", stdout=io.StringIO())

    assert [c.credentials for c in Cluster.objects.filter(pk__in=before)] == [TOKEN]
