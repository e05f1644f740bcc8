"""The parts of `portal.settings` that are structure, not environment.

`portal.settings` stays the one settings module (DJANGO_SETTINGS_MODULE=portal.settings):
it reads every variable and decides. What it assembles from them lives here, a concern a
module, as functions of the values it read, so re-reading the settings (a test's reload)
re-reads the environment too:

- `environment`: reading booleans and lists from the environment.
- `checks`: the startup refusals (half-configured sign-on, malformed egress networks, the
  production guard), each message naming what to set.
- `api`: Django REST framework, the OpenAPI schema, and the cache its throttling counts in.
- `workers`: Celery's filesystem broker and beat's schedule.
- `observability`: logging (JSON or plain, the request id, secrets redacted).
- `security`: the Content-Security-Policy.
"""
