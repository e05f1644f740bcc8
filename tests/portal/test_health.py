import pytest

from portal.celery import app as celery_app


def test_healthz_answers_ok_without_touching_dependencies(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


@pytest.mark.django_db
def test_readyz_is_ready_when_database_and_broker_answer(client):
    response = client.get("/readyz")
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["status"] == "ready"
    assert body["checks"]["database"]["ok"] and body["checks"]["broker"]["ok"]


@pytest.mark.django_db
def test_readyz_is_503_and_names_the_broker_when_it_is_unreachable(client):
    original = celery_app.conf.broker_url
    # Port 9 (discard) is closed on loopback: a real, refused connection.
    celery_app.conf.broker_url = "redis://127.0.0.1:9/0"
    try:
        response = client.get("/readyz")
    finally:
        celery_app.conf.broker_url = original
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "unavailable"
    assert body["checks"]["database"]["ok"] is True
    assert body["checks"]["broker"]["ok"] is False
    assert "error" in body["checks"]["broker"]


def test_health_endpoints_refuse_post(client):
    assert client.post("/healthz").status_code == 405
