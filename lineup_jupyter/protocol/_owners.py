"""Who owns a host name: its registrable domain by the Public Suffix List (H27's cards, H31).

A card shows who is behind a URL or a domain by marking its registrable domain: the public
suffix plus one label. ``evil-corp.s3.amazonaws.com`` is owned by whoever holds that bucket,
not by Amazon, because ``s3.amazonaws.com`` is on the list's private section (so are
``github.io``, ``firebaseapp.com``, ``blob.core.windows.net``). A short list of suffixes in
the page got those wrong; this is the answer's one home. The list comes from the maintained
``publicsuffixlist`` package, which carries it (no fetch at run time): its version is the
list's date (docs/security.md says how to refresh it).

The kernel answers, the page only draws: each card's spec carries the owners of the hosts it
names (``owners_of``), keyed by the host as the browser's URL parser spells it (lower case,
IDNA as punycode). A host the page finds without an owner is shown whole, never guessed.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from functools import lru_cache
from urllib.parse import urlsplit

from publicsuffixlist import PublicSuffixList

__all__ = ["is_public_suffix", "owner", "owners_of", "url_host"]

_OWNERS_PER_CARD = 64  # hosts a card names; an argument list holds at most this many URLs


@lru_cache(maxsize=1)
def _list() -> PublicSuffixList:
    # Parsed on first use (about 0.1 s), not at import: most kernels never show a URL.
    return PublicSuffixList()


def _ascii(host: str) -> str | None:
    """The host as the browser sends it: lower case, each non-ASCII label as punycode."""
    host = host.strip().rstrip(".").lower()
    if not host or ".." in host:
        return None
    try:
        return host.encode("idna").decode("ascii")
    except UnicodeError:
        return None


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True


def owner(host: str) -> str | None:
    """The registrable domain of ``host`` (punycode); the host itself for an IP address, a
    single label (``localhost``) or a public suffix used as a host (``github.io``): then no
    shorter name owns it. None for text that is no host name."""
    name = _ascii(host)
    if name is None:
        return None
    if _is_ip(name):
        return name
    private = _list().privatesuffix(name)
    return name if private is None else str(private)


def is_public_suffix(domain: str) -> bool:
    """Whether ``domain`` is a public suffix: a name under which anyone may register
    (``com``, ``co.uk``, ``github.io``, ``s3.amazonaws.com``). A wildcard over it covers
    every site there."""
    name = _ascii(domain)
    return name is not None and not _is_ip(name) and bool(_list().is_public(name))


def url_host(text: str) -> str | None:
    """The host of an absolute URL as the browser spells it, or None."""
    try:
        host = urlsplit(text.strip()).hostname
    except ValueError:
        return None
    if host is None:
        return None
    # The browser's URL.hostname keeps an IPv6 address in brackets.
    return f"[{host}]" if ":" in host else _ascii(host)


def owners_of(values: Iterable[object]) -> dict[str, str]:
    """``{host: owner}`` for the URL strings among ``values`` (a card's arguments), at most
    ``_OWNERS_PER_CARD`` hosts: what the page marks as who is behind each URL."""
    owners: dict[str, str] = {}
    for value in values:
        if len(owners) >= _OWNERS_PER_CARD:
            break
        if not isinstance(value, str) or "://" not in value[:64]:
            continue
        host = url_host(value)
        found = None if host is None else owner(host)
        if host is not None and found is not None:
            owners[host] = found
    return owners
