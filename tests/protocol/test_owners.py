"""Who owns a host (lineup_jupyter/protocol/_owners.py): the Public Suffix List's answer, the
one the cards mark (issue 22 §2). A short list of suffixes in the page put `amazonaws.com` in
bold for `evil-corp.s3.amazonaws.com`."""

from __future__ import annotations

import pytest

from lineup_jupyter.protocol._owners import is_public_suffix, owner, owners_of, url_host


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("evil-corp.s3.amazonaws.com", "evil-corp.s3.amazonaws.com"),  # a bucket, not Amazon
        ("attacker.firebaseapp.com", "attacker.firebaseapp.com"),
        ("mallory.blob.core.windows.net", "mallory.blob.core.windows.net"),
        ("user.github.io", "user.github.io"),
        ("docs.example.co.uk", "example.co.uk"),
        ("accounts.google.com.evil.example", "evil.example"),
        ("a.b.example.com", "example.com"),
        ("Sub.EXAMPLE.com", "example.com"),
        ("a.例え.jp", "xn--r8jz45g.jp"),  # as the browser sends it: punycode
        ("127.0.0.1", "127.0.0.1"),
        ("[::1]", "[::1]"),
        ("localhost", "localhost"),  # a single label: its own owner
        ("github.io", "github.io"),  # a public suffix as a host: no shorter name owns it
        ("a..b", None),
        ("", None),
    ],
)
def test_the_owner_of_a_host_is_its_registrable_domain(host: str, expected: str | None) -> None:
    assert owner(host) == expected


@pytest.mark.parametrize(
    ("domain", "public"),
    [
        ("com", True),
        ("co.uk", True),
        ("github.io", True),
        ("s3.amazonaws.com", True),
        ("example.com", False),
        ("evil-corp.s3.amazonaws.com", False),
        ("127.0.0.1", False),
    ],
)
def test_public_suffixes_are_known(domain: str, public: bool) -> None:
    assert is_public_suffix(domain) is public


def test_a_cards_owners_are_keyed_by_the_host_the_browser_parses() -> None:
    values = [
        "https://user:pw@Sub.Example.COM/p?q",
        "https://evil-corp.s3.amazonaws.com/x",
        "http://[::1]:8080/",
        "https://дом.example.рф/",
        "not a url",
        "mailto:a@example.com",  # no host: nothing to mark
        42,
    ]
    assert owners_of(values) == {
        "sub.example.com": "example.com",
        "evil-corp.s3.amazonaws.com": "evil-corp.s3.amazonaws.com",
        "[::1]": "[::1]",
        "xn--d1aqf.example.xn--p1ai": "example.xn--p1ai",
    }
    assert url_host("https://[::1]/") == "[::1]"


def test_a_card_names_a_bounded_number_of_owners() -> None:
    values = [f"https://h{n}.example{n}.com/" for n in range(1000)]
    assert len(owners_of(values)) == 64
