# syntax=docker/dockerfile:1
# Build stage: wheels for Berth and its pinned dependencies.
FROM python:3.11-slim-bookworm AS build
WORKDIR /src
# PyICU compiles against the system's ICU.
RUN apt-get update \
 && apt-get install -y --no-install-recommends g++ pkg-config libicu-dev \
 && rm -rf /var/lib/apt/lists/*
COPY pyproject.toml README.md ./
COPY portal portal
COPY tenants tenants
COPY provisioning provisioning
RUN pip wheel --no-cache-dir --wheel-dir /wheels .

# Runtime stage: no compilers, no build files, a non-root user (uid/gid 10001, as the Helm
# chart's securityContext expects); runs with a read-only root filesystem given writable
# /tmp and data dir.
FROM python:3.11-slim-bookworm
ENV PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1 \
    BERTH_DATA_DIR=/var/lib/berth BERTH_STATIC_ROOT=/app/staticfiles
RUN apt-get update \
 && apt-get install -y --no-install-recommends git openssh-client libicu72 \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 berth \
 && useradd --system --uid 10001 --gid 10001 --home-dir /app --no-create-home berth \
 && mkdir -p /var/lib/berth && chown berth:berth /var/lib/berth
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir /wheels/* && rm -rf /wheels
WORKDIR /app
# The code belongs to root: the user it runs as can read it, not change it.
COPY manage.py ./
COPY templates templates
COPY static static
# The docs, which the pages link to (/docs/<name>.md).
COPY docs docs
COPY portal portal
COPY tenants tenants
COPY provisioning provisioning
# Static files collected into the image (served by WhiteNoise); DEBUG only so that this
# build step needs no production secrets, with a throwaway data dir.
RUN BERTH_DEBUG=1 BERTH_DATA_DIR=/tmp/build-data python manage.py collectstatic --noinput \
 && rm -rf /tmp/build-data
USER 10001:10001
EXPOSE 8000
# Berth logs one JSON line per request itself (with its request id): no gunicorn access log.
CMD ["gunicorn", "portal.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "3"]
