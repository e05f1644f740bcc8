#!/usr/bin/env python
import os
import sys


def development_settings() -> str | None:
    """Beside `make run` (its data directory holds dev-secrets.env and no SECRET_KEY is set):
    take the environment `make run` gives its own processes, so commands see the same
    database, queue and secrets. Otherwise, without SECRET_KEY, why nothing can run."""
    if os.environ.get("DJANGO_SETTINGS_MODULE", "portal.settings") != "portal.settings":
        return None
    if os.environ.get("SECRET_KEY") or os.environ.get("BERTH_DEBUG") == "1":
        return None
    from portal.run import data_directory, development_environment

    data_dir = data_directory()
    if not (data_dir / "dev-secrets.env").exists():
        return (f"Berth needs SECRET_KEY and BERTH_FERNET_KEYS to run manage.py (README.md, "
                f"Configuration), or `make run`'s development data in {data_dir} "
                "(run `make run` once, or set BERTH_DATA_DIR to its data directory).")
    os.environ.update(development_environment(data_dir))
    return None


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")
    problem = development_settings()
    if problem:
        sys.exit(problem)
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
