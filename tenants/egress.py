"""Where Berth may open connections for its users: tenants' webhooks and GitOps repositories.

A URL a tenant owner or admin types must not turn Berth into a way into its own network:
the cloud metadata service (169.254.169.254), a Redis or database next to it, Berth itself.
`check_host` resolves a host once and refuses it when any of its addresses is loopback,
link-local, private, unspecified, multicast, reserved or otherwise not public (IPv4-mapped
and 6to4/Teredo forms of those included), or one of Berth's own; unless the operator allows
that network with BERTH_EGRESS_ALLOW (CIDRs). Callers then connect to the addresses it
returns, not to the name, so a second DNS answer cannot point somewhere else.

Webhooks also need https://; plain http:// only to a host whose every address is in
BERTH_EGRESS_ALLOW (a network the operator vouches for, such as the development stack's).

Pure standard library and settings: importable by the domain and by the git client alike.
"""

from __future__ import annotations

import functools
import ipaddress
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import urlsplit

import urllib3
from django.conf import settings

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
ALLOW_SETTING = "BERTH_EGRESS_ALLOW"


class EgressRefused(Exception):
    """Berth will not connect there; `message` says why and how an operator could allow it."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class Unresolvable(EgressRefused):
    """The name does not resolve now: it may tomorrow (worth retrying a delivery)."""


def allowed_networks() -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    """BERTH_EGRESS_ALLOW as networks (portal.settings has refused a malformed one)."""
    return [
        ipaddress.ip_network(str(cidr), strict=False)
        for cidr in getattr(settings, ALLOW_SETTING, ())
    ]


def is_allowed(address: IPAddress) -> bool:
    return any(
        address in network for network in allowed_networks() if network.version == address.version
    )


def _embedded(address: IPAddress) -> IPAddress | None:
    """The IPv4 address an IPv6 one carries (::ffff:a.b.c.d, 6to4, Teredo), if any."""
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped:
            return address.ipv4_mapped
        if address.sixtofour:
            return address.sixtofour
        if address.teredo:
            return address.teredo[1]
    return None


def _kind(address: IPAddress) -> str | None:
    """What makes the address one Berth does not reach for its users, in plain words."""
    inner = _embedded(address)
    if inner is not None and _kind(inner):
        return f"{_kind(inner)} (as IPv6)"
    for test, words in (
        ("is_unspecified", "an unspecified address"),
        ("is_loopback", "a loopback address"),
        ("is_link_local", "a link-local address (cloud metadata lives there)"),
        ("is_multicast", "a multicast address"),
        ("is_private", "a private address"),
        ("is_reserved", "a reserved address"),
    ):
        if getattr(address, test):
            return words
    if not address.is_global:
        return "not a public address"
    if address in own_addresses():
        return "this Berth's own address"
    return None


@functools.cache
def _hostname_addresses() -> frozenset[IPAddress]:
    """The addresses this machine's own name resolves to (looked up once per process)."""
    try:  # not getfqdn(): a reverse lookup can take seconds where DNS is slow
        infos = socket.getaddrinfo(socket.gethostname(), None)
    except OSError:
        return frozenset()
    return frozenset(_parse(str(info[4][0])) for info in infos)


def own_addresses() -> frozenset[IPAddress]:
    """Berth's own addresses: its host name's, and those written as addresses in
    ALLOWED_HOSTS and BERTH_BASE_URL."""
    literal = set()
    for name in (*settings.ALLOWED_HOSTS, urlsplit(settings.BERTH_BASE_URL).hostname or ""):
        try:
            literal.add(_parse(name.strip("[]")))
        except ValueError:
            continue
    return _hostname_addresses() | literal


def own_names() -> set[str]:
    """The names Berth answers to (ALLOWED_HOSTS, BERTH_BASE_URL's host)."""
    names = {name.lower().lstrip(".") for name in settings.ALLOWED_HOSTS if name != "*"}
    names.add((urlsplit(settings.BERTH_BASE_URL).hostname or "").lower())
    return names - {""}


def _parse(text: str) -> IPAddress:
    return ipaddress.ip_address(text.split("%", 1)[0])  # fe80::1%eth0: the zone is no address


def resolve(host: str, port: int) -> list[IPAddress]:
    """Every address `host` resolves to, in the resolver's order (one lookup)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise Unresolvable(f"{host} does not resolve ({exc})") from exc
    addresses: list[IPAddress] = []
    for info in infos:
        address = _parse(str(info[4][0]))
        if address not in addresses:
            addresses.append(address)
    if not addresses:
        raise Unresolvable(f"{host} does not resolve")
    return addresses


def check_host(host: str, port: int) -> list[IPAddress]:
    """The addresses to connect to for `host`, all of them checked; raises EgressRefused
    when any one is refused (a name with one bad address among good ones is refused too:
    which one a client picks is not ours to decide)."""
    host = host.strip().strip("[]")
    if not host:
        raise EgressRefused("the URL names no host")
    addresses = resolve(host, port)
    own_name = host.lower().rstrip(".") in own_names()
    for address in addresses:
        if is_allowed(address):
            continue
        kind = _kind(address)
        if kind:
            shown = f"{host} is" if host == str(address) else f"{host} resolves to {address},"
            raise EgressRefused(f"{shown} {kind}; allow it with {ALLOW_SETTING}")
        if own_name:
            raise EgressRefused(
                f"{host} is one of this Berth's own names; allow its "
                f"address {address} with {ALLOW_SETTING}"
            )
    return addresses


@dataclass(frozen=True)
class Destination:
    scheme: str
    host: str  # as written (no brackets), for the Host header, SNI and certificates
    port: int
    path: str  # with its query
    addresses: tuple[IPAddress, ...]  # checked: connect to these, not to `host`

    @property
    def host_header(self) -> str:
        shown = f"[{self.host}]" if ":" in self.host else self.host
        default = {"https": 443, "http": 80}[self.scheme]
        return shown if self.port == default else f"{shown}:{self.port}"


def connection_pools(
    destination: Destination, *, timeout: float
) -> Iterator[urllib3.HTTPConnectionPool]:
    """A pool per checked address, in order: connect to what was checked (the name kept for
    SNI and the certificate), never to a second lookup of the name."""
    for address in destination.addresses:
        options = {"timeout": timeout, "retries": False, "maxsize": 1}
        if destination.scheme == "https":
            yield urllib3.HTTPSConnectionPool(
                str(address),
                destination.port,
                server_hostname=destination.host,
                assert_hostname=destination.host,
                cert_reqs="CERT_REQUIRED",
                **options,
            )
        else:
            yield urllib3.HTTPConnectionPool(str(address), destination.port, **options)


def check_webhook_url(url: str) -> Destination:
    """Where a webhook to `url` would go, checked; raises EgressRefused saying why not."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as exc:
        raise EgressRefused(f"not a URL Berth can post to ({exc})") from exc
    scheme = parts.scheme.lower()
    if scheme not in ("https", "http") or not parts.hostname:
        raise EgressRefused("give an https:// URL")
    if parts.username or parts.password:
        raise EgressRefused(
            "credentials do not belong in the URL: set the webhook secret, which signs every event"
        )
    port = port or (443 if scheme == "https" else 80)
    addresses = check_host(parts.hostname, port)
    if scheme == "http" and not all(is_allowed(address) for address in addresses):
        raise EgressRefused(
            f"give an https:// URL (plain http:// only to networks allowed with {ALLOW_SETTING})"
        )
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return Destination(scheme, parts.hostname, port, path, tuple(addresses))


def webhook_url_problem(url: str) -> str | None:
    """Why a webhook URL is refused (for forms and serializers), or None."""
    if not url.strip():
        return None
    try:
        check_webhook_url(url)
    except EgressRefused as exc:
        return f"Berth will not post events there: {exc.message}."
    return None


def forge_url_problem(url: str) -> str | None:
    """Why a forge's API URL is refused (for forms and serializers), or None: the same
    rules as a webhook's, since Berth calls it with the tenant's token."""
    if not url.strip():
        return None
    try:
        check_webhook_url(url)
    except EgressRefused as exc:
        return f"Berth will not call a forge there: {exc.message}."
    return None
