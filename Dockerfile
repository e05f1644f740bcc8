# syntax=docker/dockerfile:1
# Build stage: wheels for Berth and its pinned dependencies.
FROM python:3.11-slim-bookworm AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY portal portal
COPY tenants tenants
COPY provisioning provisioning
RUN pip wheel --no-cache-dir --wheel-dir /wheels .

# Runtime stage: no compilers, no build files, a non-root user.
FROM python:3.11-slim-bookworm
ENV PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1 BERTH_DATA_DIR=/var/lib/berth
RUN apt-get update \
 && apt-get install -y --no-install-recommends git openssh-client \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --home-dir /app berth \
 && mkdir -p /var/lib/berth && chown berth /var/lib/berth
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir /wheels/* && rm -rf /wheels
WORKDIR /app
COPY --chown=berth manage.py ./
COPY --chown=berth templates templates
COPY --chown=berth static static
COPY --chown=berth portal portal
COPY --chown=berth tenants tenants
COPY --chown=berth provisioning provisioning
USER 10001
EXPOSE 8000
CMD ["gunicorn", "portal.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "3", "--access-logfile", "-"]
