"""Running git: one session per remote, its credentials handed over in the environment (an
HTTPS token as an extra header, an SSH deploy key as a private file), never on a
command line.
"""

from __future__ import annotations

import base64
import contextlib
import os
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path
from urllib.parse import urlsplit

from django.conf import settings

from provisioning.gitops.remote import (
    GitError,
    Policy,
    Remote,
    insecure_allowed,
    private_key,
    redact,
    state_dir,
    token_pair,
)
from tenants.egress import EgressRefused, Unresolvable, check_host

_AUTH_REFUSED = re.compile(
    r"(?i)could not read username|authentication failed|returned error: 40[13]"
    r"|permission denied \(publickey"
)
# Failures that retrying will not fix.
_PERMANENT = re.compile(
    r"(?i)authentication failed|could not read (username|password)|terminal prompts disabled"
    r"|permission denied|returned error: (401|403|404)|repository not found|not found"
    r"|does not appear to be a git repository|access denied|not exported"
    r"|host key verification failed|hook declined|protected branch|unsupported"
)
_SCP_HOST = re.compile(r"^(?:[^@/\s:]+@)?(?P<host>\[[^\]]+\]|[^@/\s:]+):")
_DEFAULT_PORTS = {"https": 443, "http": 80, "ssh": 22, "git": 9418}
# Inside `interactive()`: the most any git command may take (seconds).
_interactive_timeout: ContextVar[float | None] = ContextVar("berth_git_interactive", default=None)


@contextlib.contextmanager
def interactive() -> Iterator[None]:
    """Within it, someone is waiting for git's answer (a page, an API call, the repository
    check): every command, whatever its transport, is killed after
    BERTH_GIT_WEB_TIMEOUT_SECONDS instead of the worker's longer BERTH_GIT_TIMEOUT_SECONDS."""
    token = _interactive_timeout.set(float(settings.BERTH_GIT_WEB_TIMEOUT_SECONDS))
    try:
        yield
    finally:
        _interactive_timeout.reset(token)


class Git:
    """git with one remote's credentials in its environment; every message redacted."""

    def __init__(self, env: dict[str, str], secrets: list[str], timeout: float) -> None:
        self.env = env
        self.secrets = secrets
        self.timeout = timeout

    def run(
        self,
        *args: str,
        cwd: Path,
        input: str | bytes | None = None,
        check: bool = True,
        network: bool = False,
        env: dict[str, str] | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """git with these arguments; `input` as text, or as bytes when it must reach git as
        they are (file contents in a fast-import stream). Its output is text either way."""
        text = (
            {}
            if isinstance(input, bytes)
            else {"text": True, "encoding": "utf-8", "errors": "replace"}
        )
        # Its own process group: on timeout its helpers (ssh, git-remote-https) go with it,
        # or their open pipes would keep us waiting for them.
        with subprocess.Popen(  # noqa: S603 - fixed argv, no shell
            ["git", *args],  # noqa: S607 - git from PATH, like the operator's own
            cwd=cwd,
            env={**self.env, **(env or {})},
            stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            **text,
        ) as child:
            try:
                stdout, stderr = child.communicate(input, timeout=self.timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(child.pid, signal.SIGKILL)
                child.communicate()
                raise GitError(
                    f"git {args[0]} timed out after {self.timeout:g}s", transient=True
                ) from None
        proc = subprocess.CompletedProcess(child.args, child.returncode, stdout, stderr)
        if not text:
            proc = subprocess.CompletedProcess(
                proc.args,
                proc.returncode,
                proc.stdout.decode("utf-8", "replace"),
                proc.stderr.decode("utf-8", "replace"),
            )
        if check and proc.returncode != 0:
            raise self.error(args[0], proc, network=network)
        return proc

    def fetch_branch(self, *options: str, refspec: str, cwd: Path) -> bool:
        """Fetch one branch of origin. False when origin has no such branch (an empty
        repository, or a branch not made yet); GitError for any other failure."""
        fetched = self.run(
            "fetch",
            "--quiet",
            *options,
            "--no-tags",
            "--",
            "origin",
            refspec,
            cwd=cwd,
            check=False,
            network=True,
        )
        if fetched.returncode == 0:
            return True
        if "couldn't find remote ref" not in fetched.stderr:
            raise self.error("fetch", fetched, network=True)
        return False

    def error(
        self, command: str, proc: subprocess.CompletedProcess[str], *, network: bool
    ) -> GitError:
        text = redact((proc.stderr or proc.stdout or "").strip(), self.secrets)
        text = " ".join(line.strip() for line in text.splitlines() if line.strip())
        transient = network and not _PERMANENT.search(text)
        if network and _AUTH_REFUSED.search(text):
            text += " (the repository refused the credentials Berth has for it, or wants some:"
            text += " check the tenant's GitOps credentials)"
        return GitError(
            f"git {command} failed: {text or f'exit {proc.returncode}'}",
            transient=transient,
            network=network,
        )


def _token_header(credentials: str) -> tuple[str, list[str]]:
    """`token` or `username:token` → an HTTP Basic Authorization header value."""
    user, token = token_pair(credentials)
    encoded = base64.b64encode(f"{user}:{token}".encode()).decode()
    return f"Authorization: Basic {encoded}", [token, encoded, credentials.strip()]


def endpoint(url: str, kind: str) -> tuple[str, int] | None:
    """The host and port git connects to for `url` (None: file://, no network)."""
    if kind == "file":
        return None
    parts = urlsplit(url)
    if parts.scheme:
        try:
            port = parts.port
        except ValueError as exc:
            raise GitError(
                f"the repository URL's port is not a number ({exc})", transient=False
            ) from None
        scheme = "ssh" if kind == "ssh" else parts.scheme.lower()
        return parts.hostname or "", port or _DEFAULT_PORTS.get(scheme, 0)
    scp = _SCP_HOST.match(url)  # git@host:path
    return (scp["host"].strip("[]") if scp else ""), 22


def checked_addresses(remote: Remote) -> tuple[str, int, list[str]]:
    """The repository's host and port and the addresses it resolves to, each checked
    against Berth's egress policy (tenants.egress). Raises GitError: permanent when the
    address is refused, transient when the name does not resolve now."""
    host, port = endpoint(remote.url, remote.transport) or ("", 0)
    try:
        addresses = check_host(host, port)
    except Unresolvable as exc:
        raise GitError(exc.message, transient=True, network=True) from None
    except EgressRefused as exc:
        raise GitError(
            f"Berth does not connect there: {exc.message}", transient=False, network=True
        ) from None
    return host, port, [str(address) for address in addresses]


@contextlib.contextmanager
def session(remote: Remote, policy: Policy) -> Iterator[Git]:
    """A git environment for `remote`, its credentials in it, gone afterwards. The remote's
    host is checked first (tenants.egress) and, for https and ssh, git connects to the
    address that was checked, not to a second DNS answer."""
    kind = remote.transport
    pinned = checked_addresses(remote) if kind != "file" else None
    timeout = policy.timeout_seconds
    if _interactive_timeout.get() is not None:
        timeout = min(timeout, _interactive_timeout.get())
    base = state_dir()
    home = base / "home"
    home.mkdir(exist_ok=True)
    private = Path(tempfile.mkdtemp(prefix="berth-git-"))  # 0700
    try:
        env = {
            key: os.environ[key]
            for key in (
                "PATH",
                "TMPDIR",
                "SSL_CERT_FILE",
                "SSL_CERT_DIR",
                "HTTPS_PROXY",
                "HTTP_PROXY",
                "NO_PROXY",
                "https_proxy",
                "http_proxy",
                "no_proxy",
            )
            if key in os.environ
        }
        env.update(
            HOME=str(home),
            LC_ALL="C",
            GIT_TERMINAL_PROMPT="0",
            GIT_ASKPASS="",
            SSH_ASKPASS="",
            GCM_INTERACTIVE="never",
            GIT_CONFIG_NOSYSTEM="1",
            GIT_CONFIG_GLOBAL=os.devnull,
        )
        config = [
            ("credential.helper", ""),
            ("gc.auto", "0"),
            ("init.defaultBranch", "main"),
            ("advice.detachedHead", "false"),
            ("commit.gpgSign", "false"),
            # git's own allow-list of transports, as Remote's: never ext:: or fd::, and
            # file://, git://, http:// only where the operator allows them.
            ("protocol.allow", "never"),
            ("protocol.https.allow", "always"),
            ("protocol.ssh.allow", "always"),
            *(
                (f"protocol.{name}.allow", "always" if insecure_allowed() else "never")
                for name in ("http", "git", "file")
            ),
        ]
        secrets: list[str] = []
        if kind == "https":
            config += [
                ("http.lowSpeedLimit", "1000"),
                ("http.lowSpeedTime", str(max(int(timeout), 1))),
            ]
            if pinned:
                host, port, addresses = pinned
                shown = ",".join(f"[{a}]" if ":" in a else a for a in addresses)
                config.append(("http.curloptResolve", f"{host}:{port}:{shown}"))
            if remote.credentials:
                header, values = _token_header(remote.credentials)
                config.append((f"http.{remote.url}.extraHeader", header))
                secrets += values
        elif kind == "ssh":
            ssh = ["ssh"]
            if remote.credentials:
                key_file = private / "deploy-key"
                fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                with os.fdopen(fd, "w") as handle:
                    handle.write(private_key(remote.credentials))
                ssh += ["-i", str(key_file), "-o", "IdentitiesOnly=yes"]
                secrets += [
                    line.strip()
                    for line in remote.credentials.splitlines()
                    if len(line.strip()) >= 16 and not line.startswith("-----")
                ]
            if pinned:  # the checked address; host keys stay filed under the name
                host, _, addresses = pinned
                ssh += ["-o", f"HostName={addresses[0]}", "-o", f"HostKeyAlias={host}"]
            ssh += [
                "-o",
                "BatchMode=yes",
                "-o",
                "StrictHostKeyChecking=accept-new",
                "-o",
                f"UserKnownHostsFile={base / 'known_hosts'}",
                "-o",
                f"ConnectTimeout={max(int(timeout), 1)}",
            ]
            env["GIT_SSH_COMMAND"] = shlex.join(ssh)
            env["GIT_SSH_VARIANT"] = "ssh"
        env["GIT_CONFIG_COUNT"] = str(len(config))
        for index, (key, value) in enumerate(config):
            env[f"GIT_CONFIG_KEY_{index}"] = key
            env[f"GIT_CONFIG_VALUE_{index}"] = value
        yield Git(env, secrets, timeout)
    finally:
        shutil.rmtree(private, ignore_errors=True)
