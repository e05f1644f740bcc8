import pytest
from django.db import connection
from django.test import override_settings

from tenants import crypto
from tenants.crypto import SecretDecryptionError
from tenants.models import Cluster
from tests.support.factories import ClusterFactory

TOKEN = "eyJhbGciOiJSUzI1NiJ9.cluster-token-value"


def raw_column(table: str, column: str, pk: int) -> str:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {column} FROM {table} WHERE id = %s", [pk])  # noqa: S608
        return cursor.fetchone()[0]


@pytest.mark.django_db
def test_cluster_credentials_are_encrypted_in_the_database():
    cluster = ClusterFactory(credentials=TOKEN)

    stored = raw_column("tenants_cluster", "credentials", cluster.pk)

    assert TOKEN not in stored
    assert Cluster.objects.get(pk=cluster.pk).credentials == TOKEN


@pytest.mark.django_db
def test_old_key_still_decrypts_after_rotation(settings):
    cluster = ClusterFactory(credentials=TOKEN)
    new_key = "Zm9vYmFyYmF6cXV4cXV1eGZvb2JhcmJhenF1eHF1dXg="
    with override_settings(FERNET_KEYS=[new_key, *settings.FERNET_KEYS]):
        assert Cluster.objects.get(pk=cluster.pk).credentials == TOKEN


@pytest.mark.django_db
def test_wrong_key_gives_a_clear_error_not_garbage():
    cluster = ClusterFactory(credentials=TOKEN)
    with (
        override_settings(FERNET_KEYS=["Zm9vYmFyYmF6cXV4cXV1eGZvb2JhcmJhenF1eHF1dXg="]),
        pytest.raises(SecretDecryptionError, match="BERTH_FERNET_KEYS"),
    ):
        Cluster.objects.get(pk=cluster.pk)


def test_encrypt_is_not_deterministic():
    assert crypto.encrypt("same") != crypto.encrypt("same")
