"""Berth's Redis transport (portal/broker.py) against a real Redis. When Redis goes away,
Celery's consumer drops the connection (kombu detaches its transport) and kombu may close
the old channel afterwards, or a task that finished meanwhile acknowledges through it.
kombu's own transport dies on both with an AttributeError that takes the worker down
(tests/system/test_faults_processes.py restarts Redis around real workers); Berth's neither
fails nor loses the message: it stays in Redis' unacked set, and is handed out again after
the visibility timeout."""

from __future__ import annotations

import os
import uuid

import pytest
from kombu import Connection
from kombu.transport import redis as kombu_redis

from portal import broker

pytestmark = pytest.mark.skipif(
    not os.environ.get("REDIS_URL", "").startswith("redis://"),
    reason="needs REDIS_URL (a real Redis; make test uses it when set, as CI does)",
)
BODY = "look at request 7"


@pytest.fixture
def keys():
    """A queue and unacked set of this test's own, so restoring touches nothing else."""
    tag = f"berth-broker-test-{uuid.uuid4().hex}"
    return {
        "queue": tag,
        "options": {
            "unacked_key": f"{tag}-unacked",
            "unacked_index_key": f"{tag}-unacked-index",
            "unacked_mutex_key": f"{tag}-unacked-mutex",
        },
    }


def delivered(transport: type, keys: dict):
    connection = Connection(
        os.environ["REDIS_URL"], transport=transport, transport_options=keys["options"]
    )
    channel = connection.default_channel
    channel.queue_declare(keys["queue"])
    channel.basic_publish(channel.prepare_message(BODY), exchange="", routing_key=keys["queue"])
    message = channel.basic_get(keys["queue"], no_ack=False)
    assert message is not None and message.body.decode() == BODY
    return connection, message


def lose_connection(connection: Connection) -> None:
    """As kombu leaves it when Celery's consumer drops a lost connection
    (Connection.collect detaches the transport), then the old channel closes."""
    connection.transport.client = None
    connection.default_channel.close()


def handed_out_again(keys: dict) -> str | None:
    """What a worker gets from the queue once the visibility timeout (here 0 s) has passed
    and kombu restores the unacknowledged messages it finds."""
    with Connection(
        os.environ["REDIS_URL"],
        transport=broker.Transport,
        transport_options={**keys["options"], "visibility_timeout": 0},
    ) as fresh:
        channel = fresh.default_channel
        channel.qos.restore_visible(num=100)
        message = channel.basic_get(keys["queue"], no_ack=True)
        return None if message is None else message.body.decode()


def test_kombus_own_transport_dies_closing_a_channel_of_a_dropped_connection(keys):
    """The failure the repair is for, on the path the tests below take."""
    connection, _ = delivered(kombu_redis.Transport, keys)
    with pytest.raises(AttributeError, match="'NoneType' object has no attribute"):
        lose_connection(connection)
    handed_out_again(keys)


def test_a_task_acknowledged_after_its_connection_was_lost_is_handed_out_again(keys, caplog):
    connection, message = delivered(broker.Transport, keys)
    lose_connection(connection)  # no error

    message.ack()  # the task finished after Redis went away: no error either

    assert "not acknowledged: its connection to the broker was lost" in caplog.text
    # Not lost: a worker gets it again (Berth's jobs are idempotent: a request already done
    # costs one query), once.
    assert handed_out_again(keys) == BODY
    assert handed_out_again(keys) is None


def test_a_task_rejected_after_its_connection_was_lost_is_handed_out_again(keys, caplog):
    connection, message = delivered(broker.Transport, keys)
    lose_connection(connection)

    message.reject()

    assert "not rejected: its connection to the broker was lost" in caplog.text
    assert handed_out_again(keys) == BODY
