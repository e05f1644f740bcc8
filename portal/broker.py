"""Celery's Redis transport, with one repair: a channel whose connection is gone neither
restores nor acknowledges through it.

When Redis goes away while tasks run, Celery's consumer closes its connection and opens
another once Redis is back. kombu can then still reach for the old channel: to restore its
unacknowledged messages as it closes a transport already detached (kombu#582), or to
acknowledge a task that finished after the connection was lost (the threads pool cannot
stop a running task, as Celery asks it to for late acknowledgement). Either needs a new
Redis client from a connection that is no longer there, dies with an AttributeError
("'NoneType' object has no attribute 'hostname'" or "... 'client'") and takes the worker
with it. Through a dead channel there is nothing to do: its messages stay in Redis' unacked
set, which a worker restores after the visibility timeout, and a task handed out again is
harmless, since Berth's jobs are idempotent (a request already done costs one query) and
the sweep hands out what is left well before that (the database, not the broker, says what
remains to do).
"""

from __future__ import annotations

import logging

from kombu.transport import redis

logger = logging.getLogger(__name__)


class QoS(redis.QoS):
    def _connection_gone(self) -> bool:
        connection = self.channel.connection
        return connection is None or connection.client is None

    def restore_unacked_once(self, stderr=None):
        if self._connection_gone():
            self._on_collect.cancel()  # nor at the process's exit: the same dead end
            return None
        return super().restore_unacked_once(stderr)

    def ack(self, delivery_tag: str) -> None:
        if self._connection_gone():
            logger.warning(
                "message %s not acknowledged: its connection to the broker was "
                "lost; Redis hands it out again after the visibility timeout",
                delivery_tag,
            )
            return
        super().ack(delivery_tag)

    def reject(self, delivery_tag: str, requeue: bool = False) -> None:
        if self._connection_gone():
            logger.warning(
                "message %s not rejected: its connection to the broker was lost", delivery_tag
            )
            return
        super().reject(delivery_tag, requeue=requeue)


class Channel(redis.Channel):
    QoS = QoS


class Transport(redis.Transport):
    Channel = Channel
