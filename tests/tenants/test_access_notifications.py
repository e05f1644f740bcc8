"""Who hears of an access request: the owning tenant's owners (and platform admins) when an
outsider's waits for them, the outsider when it is decided; never the other tenant's people,
nor the requester about their own submission."""

from __future__ import annotations

from django.core import mail

from tenants import services
from tenants.choices import NamespaceState
from tenants.models import Cluster, EnvironmentTier, Namespace


def test_an_outsiders_request_mails_the_owners_and_its_decision_mails_the_outsider(
    demo_world, eager_tasks, django_capture_on_commit_callbacks
):
    namespace = Namespace.objects.create(
        name="payments-shop-dev",
        tenant=demo_world["tenant"],
        tier=EnvironmentTier.objects.get(slug="dev"),
        cluster=Cluster.objects.get(name="sandbox"),
        cpu_millis=500,
        memory_mib=512,
        state=NamespaceState.ACTIVE,
    )
    sam, olivia = demo_world["outsider"], demo_world["owner"]
    with django_capture_on_commit_callbacks(execute=True):
        grant = services.request_access(
            person=sam, namespace=namespace.name, role="member", duration="1h", reason="debug"
        )
    [asked] = mail.outbox
    assert f"request #{grant.request_id} submitted" in asked.subject
    assert sorted(asked.to) == sorted([olivia.email, demo_world["admin"].email])
    assert "role: member" in asked.body and "duration: 1h" in asked.body
    assert sam.email not in asked.to

    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        services.reject_request(
            request_id=grant.request_id, approver=olivia, reason="ask during office hours"
        )
    [decided] = mail.outbox
    assert decided.to == [sam.email] and "ask during office hours" in decided.body
