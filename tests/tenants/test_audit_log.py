import pytest

from tenants import audit
from tenants.models import AuditEvent


@pytest.fixture
def event(tenant, developer):
    return audit.record(actor=developer, action="tenant.view", obj=tenant, tenant_id=tenant.pk)


def test_audit_event_names_actor_even_as_text(event, developer):
    assert event.actor_label == developer.username
    assert event.object_type == "tenants.tenant"


def test_audit_events_cannot_be_changed(event):
    event.action = "tenant.edit"
    with pytest.raises(TypeError, match="append-only"):
        event.save()
    with pytest.raises(TypeError, match="append-only"):
        AuditEvent.objects.filter(pk=event.pk).update(action="x")


def test_audit_events_cannot_be_deleted(event):
    with pytest.raises(TypeError, match="append-only"):
        event.delete()
    with pytest.raises(TypeError, match="append-only"):
        AuditEvent.objects.all().delete()
    assert AuditEvent.objects.filter(pk=event.pk).exists()
