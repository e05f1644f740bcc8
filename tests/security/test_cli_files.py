"""What `berth` writes holding a credential (its config with an API token, a kubeconfig
with a deploy token, cached sign-in tokens) is its owner's alone: mode 0600 even where a
looser file was there before, and a symlink in its place is replaced, never written
through (it could point anywhere the user may write)."""

from __future__ import annotations

import stat

import pytest

from berth_cli import oidc
from berth_cli.client import read_config, write_config
from berth_cli.main import _write_kubeconfig

TOKEN = "berth_api_0123456789abcdef"


def mode(path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def test_login_makes_an_existing_readable_config_private(tmp_path, monkeypatch):
    config = tmp_path / "config.toml"
    config.write_text('url = "https://berth.example"\n')
    config.chmod(0o644)
    monkeypatch.setenv("BERTH_CONFIG", str(config))

    write_config({"url": "https://berth.example", "token": TOKEN})

    assert mode(config) == 0o600
    assert read_config()["token"] == TOKEN


def test_a_kubeconfig_over_a_symlink_replaces_the_link_not_its_target(tmp_path):
    elsewhere = tmp_path / "shared.txt"
    elsewhere.write_text("someone else's file\n")
    elsewhere.chmod(0o644)
    link = tmp_path / "deploy.kubeconfig"
    link.symlink_to(elsewhere)

    _write_kubeconfig(f"users:\n- user:\n    token: {TOKEN}\n", link)

    assert elsewhere.read_text() == "someone else's file\n"
    assert not link.is_symlink()
    assert TOKEN in link.read_text() and mode(link) == 0o600


def test_a_kubeconfig_over_a_readable_file_is_private_after(tmp_path):
    target = tmp_path / "deploy.kubeconfig"
    target.write_text("old\n")
    target.chmod(0o644)

    _write_kubeconfig(f"token: {TOKEN}\n", target)

    assert mode(target) == 0o600


def test_cached_sign_in_tokens_are_private_and_leave_no_temporary_file(tmp_path):
    path = oidc.cache_file("https://idp.example", "kubectl", cache_home=tmp_path)

    oidc._save(path, {"id_token": "header.claims.signature", "refresh_token": "r"})

    assert mode(path) == 0o600
    assert [entry.name for entry in path.parent.iterdir()] == [path.name]


@pytest.mark.parametrize("existing", ["file", "symlink", "none"])
def test_every_write_leaves_one_private_regular_file(tmp_path, monkeypatch, existing):
    config = tmp_path / "config.toml"
    if existing == "file":
        config.write_text("")
        config.chmod(0o666)
    elif existing == "symlink":
        config.symlink_to(tmp_path / "target.toml")
    monkeypatch.setenv("BERTH_CONFIG", str(config))

    write_config({"token": TOKEN})

    assert config.is_file() and not config.is_symlink() and mode(config) == 0o600
    assert sorted(entry.name for entry in tmp_path.iterdir()) == ["config.toml"]
