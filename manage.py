#!/usr/bin/env python
import os
import sys


def development_settings() -> str | None:
    """Beside `make run` (no SECRET_KEY set, and the data directory holds the dev-secrets.env
    `make run` generated): take the environment `make run` gives its own processes, so a
    command sees the same database, queue and secrets. Variables set in this shell win (e.g.
    `BERTH_ADMIN_PASSWORD=... manage.py ensure_superuser`). Anywhere else nothing changes;
    without SECRET_KEY and DEBUG, the one line that says what to do."""
    if os.environ.get("DJANGO_SETTINGS_MODULE", "portal.settings") != "portal.settings":
        return None
    if os.environ.get("SECRET_KEY"):
        return None
    from portal.run import data_directory, development_environment

    data_dir = data_directory()
    if (data_dir / "dev-secrets.env").is_file():
        for key, value in development_environment(data_dir).items():
            os.environ.setdefault(key, value)
        return None
    if os.environ.get("BERTH_DEBUG") == "1":
        return None  # development without `make run` (e.g. the image's collectstatic)
    return (
        f"Berth's manage.py needs SECRET_KEY and BERTH_FERNET_KEYS (README.md, "
        f"Configuration), or `make run`'s development data in {data_dir}: run `make run` "
        "once, or set BERTH_DATA_DIR to its data directory."
    )


def settings_problem() -> str | None:
    """Why the settings do not load, as Berth's settings word it. Django itself would only
    list its own commands and fail to find Berth's (a KeyError traceback that hides this)."""
    from django.conf import settings
    from django.core.exceptions import ImproperlyConfigured

    try:
        settings.INSTALLED_APPS  # noqa: B018 - loads the settings module
    except ImproperlyConfigured as problem:
        return str(problem)
    return None


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")
    problem = development_settings() or settings_problem()
    if problem:
        sys.exit(problem)
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
