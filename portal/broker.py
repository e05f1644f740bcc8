"""Celery's Redis transport, with one repair: closing a channel of a detached transport.

When Redis goes away just as a finished task is acknowledged, Celery's consumer closes its
connection, and kombu closes the default channel once more after the transport was
detached. Restoring the channel's unacknowledged messages then needs a new connection from
a transport that has none, and dies with `AttributeError: 'NoneType' object has no
attribute 'hostname'`, taking the worker with it (kombu#582). Through a detached transport
there is nothing to restore: the messages stay in Redis' unacked set, which a worker
restores after the visibility timeout, and Berth's sweep hands their requests out again
well before that (the database, not the broker, says what is left to do).
"""

from __future__ import annotations

from kombu.transport import redis


class Channel(redis.Channel):
    def close(self) -> None:
        if getattr(self.connection, "client", True) is None:
            self._qos = None  # detached: no restore through it (see above)
        super().close()


class Transport(redis.Transport):
    Channel = Channel
