"""Surface.from_dir and its watch mode (issue 7, docs/agents.md "Authoring a surface").

A save becomes a new ui.open of the same instance id (U1 replace), because code never changes
through a patch (U5); the state the host holds at that moment goes with it. The watcher is
driven by ``check()`` here, one look at a time, except in the tests of the background poller,
which wait for a condition (never for a length of time).
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import lineup_jupyter._authoring as authoring
from lineup_jupyter import (
    Agent,
    Limits,
    ProtocolError,
    Surface,
    SurfaceEvent,
    UsageError,
    bundle_integrity,
)
from lineup_jupyter.appcenter._manifest import semver_key
from lineup_jupyter.testing import ScriptedUser

from ..conftest import view_sends

HTML = "<main><button id='inc'>+1</button><output></output></main>"
CSS = "main { display: flex; }"
JS = "LineUpSurface.onState((s) => { document.querySelector('output').textContent = s.count; });"
BUNDLE_LIMIT = 160 * 1024  # the protocol's default (U3)


def save(path: Path, content: str | bytes) -> None:
    """Write a file as an editor saves it, its mtime surely past the one before: a file
    system's clock may be coarser than a test is quick (a real save is seconds apart)."""
    before = path.stat().st_mtime_ns if path.exists() else 0
    if isinstance(content, str):
        content = content.encode("utf-8")
    path.write_bytes(content)
    after = path.stat().st_mtime_ns
    if after <= before:
        os.utime(path, ns=(after, before + 1_000_000))


def make_folder(root: Path, **files: str | bytes) -> Path:
    """A folder with these files (``index_html="..."`` writes index.html)."""
    folder = root / "surface"
    folder.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        save(folder / name.replace("_", "."), content)
    return folder


@pytest.fixture
def user() -> Iterator[ScriptedUser]:
    with ScriptedUser() as scripted:
        yield scripted


@pytest.fixture
def agent(user: ScriptedUser) -> Agent:
    return user.connect_agent("agent_author")


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return make_folder(tmp_path, index_html=HTML, style_css=CSS, main_js=JS)


def opens(user: ScriptedUser, instance_id: str = "demo") -> list[dict[str, Any]]:
    """The payload of every ui.open of ``instance_id`` the host accepted, oldest first."""
    return [
        envelope["payload"]
        for envelope in user.sent()
        if envelope["type"] == "lineup.v1.ui.open"
        and envelope["payload"]["instance_id"] == instance_id
    ]


def counter(agent: Agent) -> None:
    """The agent behind the surface: each 'inc' click adds one to the state's count."""

    @agent.on_event("inc", instance_id="demo")
    def increment(event: SurfaceEvent) -> None:
        count = agent.host.surfaces[event.instance_id].state.get("count", 0)
        agent.patch(event.instance_id, {"count": count + 1}, merge=True)


# ---- from_dir: the convention ------------------------------------------------------------


def test_from_dir_reads_one_html_one_css_one_js(folder: Path) -> None:
    save(folder / "README.md", "notes")  # not a surface file
    save(folder / ".index.html.swp", "an editor's swap file")  # hidden: never read
    (folder / "drafts").mkdir()
    save(folder / "drafts" / "old.html", "<p>old</p>")  # a subfolder is not the top level

    surface = Surface.from_dir(folder)

    assert (surface.html, surface.css, surface.js) == (HTML, CSS, JS)
    assert surface.files == ("index.html", "style.css", "main.js")
    assert surface.integrity == bundle_integrity(HTML, CSS, JS)
    assert (surface.app_id, surface.version, surface.name) == (
        "local.notebook.surface",
        "0.1.0",
        None,
    )
    assert surface.path == folder and surface.path.is_absolute()
    assert HTML not in repr(surface)  # the repr names the surface, it does not dump it


def test_from_dir_takes_any_names_and_html_alone(tmp_path: Path) -> None:
    surface = Surface.from_dir(make_folder(tmp_path, Page_HTML="<p>hi</p>"))
    assert (surface.html, surface.css, surface.js) == ("<p>hi</p>", "", "")
    assert surface.files == ("Page.HTML",)


def test_from_dir_app_id_and_version_label_the_bundle(folder: Path) -> None:
    surface = Surface.from_dir(folder, app_id="org.example.counter", version="2.1.0")
    assert (surface.app_id, surface.version) == ("org.example.counter", "2.1.0")
    assert surface.integrity == bundle_integrity(HTML, CSS, JS)  # labels are not hashed (H4)


def test_from_dir_checks_against_the_limits_it_is_given(tmp_path: Path) -> None:
    folder = make_folder(tmp_path, index_html="x" * (BUNDLE_LIMIT + 1))
    with pytest.raises(UsageError, match=r"U3"):
        Surface.from_dir(folder)
    larger = Limits(max_bundle_bytes=2 * BUNDLE_LIMIT)
    assert len(Surface.from_dir(folder, limits=larger).html) == BUNDLE_LIMIT + 1


def _two_html(root: Path) -> Path:
    return make_folder(root, a_html="<p>a</p>", b_html="<p>b</p>")


REFUSALS: dict[str, tuple[Callable[[Path], Path], dict[str, Any], list[str]]] = {
    "missing folder": (lambda root: root / "nowhere", {}, ["does not exist"]),
    "a file": (
        lambda root: make_folder(root, index_html=HTML) / "index.html",
        {},
        ["is not a folder"],
    ),
    "empty folder": (lambda root: make_folder(root), {}, ["has no .html file"]),
    "css and js only": (
        lambda root: make_folder(root, style_css=CSS, main_js=JS),
        {},
        ["has no .html file"],
    ),
    "two html": (_two_html, {}, ["has 2 .html files (a.html, b.html)"]),
    "two css": (
        lambda root: make_folder(root, index_html=HTML, a_css=CSS, b_css=CSS),
        {},
        ["has 2 .css files (a.css, b.css)"],
    ),
    "two js": (
        lambda root: make_folder(root, index_html=HTML, a_js=JS, b_js=JS),
        {},
        ["has 2 .js files (a.js, b.js)"],
    ),
    "not UTF-8": (
        lambda root: make_folder(root, index_html=HTML, main_js=b"\xff\xfe"),
        {},
        ["main.js is not UTF-8 text"],
    ),
    "one file too big": (
        lambda root: make_folder(root, index_html="x" * (BUNDLE_LIMIT + 1)),
        {},
        [f"index.html is {BUNDLE_LIMIT + 1} bytes; the limit is {BUNDLE_LIMIT} (U3"],
    ),
    "all together too big": (
        lambda root: make_folder(root, index_html="x" * BUNDLE_LIMIT, main_js="y"),
        {},
        [f"the bundle (html + css + js) is {BUNDLE_LIMIT + 1} bytes", "(U3)"],
    ),
    "bad app id": (
        lambda root: make_folder(root, index_html=HTML),
        {"app_id": "Counter"},
        ["$.payload.app.id is 'Counter'", "(U2)"],
    ),
    "bad version": (
        lambda root: make_folder(root, index_html=HTML),
        {"version": "1.0"},
        ["$.payload.app.version is '1.0'", "(U2)"],
    ),
    "surface without a manifest": (
        lambda root: make_folder(root, index_html=HTML),
        {"surface": "main"},
        ["surface='main'", "there is no lineup-app.json here"],
    ),
}


@pytest.mark.parametrize("case", REFUSALS)
def test_from_dir_refuses_with_a_sentence(tmp_path: Path, case: str) -> None:
    build, options, fragments = REFUSALS[case]
    path = build(tmp_path)
    with pytest.raises(UsageError) as raised:
        Surface.from_dir(path, **options)
    message = str(raised.value)
    assert message.startswith("[lineup] "), message
    assert str(path) in message, message
    for fragment in fragments:
        assert fragment in message, message
    # Never a traceback from deep inside: no OSError or ValidationError chained to it.
    assert raised.value.__context__ is None or raised.value.__suppress_context__


def test_from_dir_refuses_an_unreadable_file(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Tests may run as root, whom chmod does not stop: the read itself is made to fail.
    real = Path.read_bytes

    def read_bytes(path: Path) -> bytes:
        if path.name == "style.css":
            raise PermissionError(13, "Permission denied")
        return real(path)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    with pytest.raises(UsageError, match=r"^\[lineup\] .*style\.css cannot be read: Permission"):
        Surface.from_dir(folder)


# ---- from_dir: an app folder -------------------------------------------------------------

DOT = b"<svg xmlns='http://www.w3.org/2000/svg'><circle r='1'/></svg>"


def app_folder(root: Path, *surfaces: str, version: str = "1.0.0") -> Path:
    """An app being written: a manifest, each surface's html and js, an asset in a subfolder."""
    folder = make_folder(root)
    (folder / "img").mkdir(exist_ok=True)
    save(folder / "img" / "dot.svg", DOT)
    manifest = {
        "id": "org.example.dots",
        "name": "Dots",
        "version": version,
        "surfaces": [
            {
                "id": surface,
                "html": f"{surface}.html",
                "js": f"{surface}.js",
                "events": ["inc"],
                "assets": ["img/dot.svg"],
            }
            for surface in surfaces
        ],
    }
    save(folder / "lineup-app.json", json.dumps(manifest))
    for surface in surfaces:
        save(folder / f"{surface}.html", f"<img src='lineup-asset:img/dot.svg'><p>{surface}</p>")
        save(folder / f"{surface}.js", f"// {surface}")
    return folder


def test_from_dir_reads_an_app_folder_through_its_manifest(tmp_path: Path) -> None:
    folder = app_folder(tmp_path, "main")
    save(folder / "notes.html", "<p>not named by the manifest</p>")  # no ambiguity here
    surface = Surface.from_dir(folder)
    assert (surface.app_id, surface.version, surface.name) == ("org.example.dots", "1.0.0", "Dots")
    assert surface.files == ("lineup-app.json", "main.html", "main.js", "img/dot.svg")
    assert "lineup-asset:" not in surface.html and "data:image/svg+xml;base64," in surface.html
    assert surface.js == "// main"
    assert Surface.from_dir(folder, version="1.1.0").version == "1.1.0"


def test_an_app_folder_opens_as_it_will_once_installed(
    tmp_path: Path, user: ScriptedUser, agent: Agent
) -> None:
    folder = app_folder(tmp_path, "main")
    user.host.apps.install(folder)
    agent.open_app("installed", "org.example.dots", "main")
    Surface.from_dir(folder).open(agent, "authored")
    installed, authored = (user.host.surfaces[i].app for i in ("installed", "authored"))
    assert (authored.html, authored.css, authored.js) == (
        installed.html,
        installed.css,
        installed.js,
    )


def test_from_dir_picks_one_of_several_surfaces(tmp_path: Path) -> None:
    folder = app_folder(tmp_path, "main", "side")
    with pytest.raises(UsageError, match=r"the app has surfaces 'main', 'side'; pick one"):
        Surface.from_dir(folder)
    with pytest.raises(UsageError, match=r"has no surface 'other', only 'main', 'side'"):
        Surface.from_dir(folder, surface="other")
    assert "<p>side</p>" in Surface.from_dir(folder, surface="side").html


@pytest.mark.parametrize(
    ("manifest", "fragment"),
    [
        ("{not json", "lineup-app.json is not JSON"),
        (json.dumps({"id": "org.example.dots"}), "lineup-app.json is not valid (H30)"),
        (
            json.dumps(
                {
                    "id": "org.example.dots",
                    "name": "Dots",
                    "version": "1.0.0",
                    "surfaces": [{"id": "main", "html": "gone.html", "events": []}],
                }
            ),
            "the manifest names 'gone.html', which is not there",
        ),
    ],
)
def test_from_dir_refuses_a_broken_app_folder(tmp_path: Path, manifest: str, fragment: str) -> None:
    folder = app_folder(tmp_path, "main")
    save(folder / "lineup-app.json", manifest)
    with pytest.raises(UsageError) as raised:
        Surface.from_dir(folder)
    assert str(raised.value).startswith(f"[lineup] {folder}: ")
    assert fragment in str(raised.value)


# ---- open ---------------------------------------------------------------------------------


def test_open_sends_the_bundle_with_its_integrity_and_U1_replaces(
    tmp_path: Path, folder: Path, user: ScriptedUser, agent: Agent
) -> None:
    surface = Surface.from_dir(folder, app_id="org.example.counter")
    surface.open(agent, "demo", state={"count": 1})
    instance = user.host.surfaces["demo"]
    assert (instance.app.html, instance.app.css, instance.app.js) == (HTML, CSS, JS)
    assert (instance.app.id, instance.app.version) == ("org.example.counter", "0.1.0")
    assert opens(user)[0]["app"]["integrity"] == surface.integrity  # checked by the host (H4)
    assert instance.state == {"count": 1}

    other = Surface.from_dir(make_folder(tmp_path / "other", index_html="<p>2</p>"))
    other.open(agent, "demo")
    assert list(user.host.surfaces) == ["demo"]
    assert user.host.surfaces["demo"].app.html == "<p>2</p>"
    assert user.host.surfaces["demo"].revision == instance.revision + 1


# ---- watch ------------------------------------------------------------------------------

# A watcher's own poller looks once an hour here: these tests look with check().
HOUR = 3600.0


def test_watch_opens_a_development_build(folder: Path, user: ScriptedUser, agent: Agent) -> None:
    with Surface.from_dir(folder).watch(agent, "demo", state={"count": 0}, interval=HOUR) as w:
        assert (w.status, w.version, w.reloads, w.last_error) == (
            "watching",
            "0.1.0-dev.1",
            0,
            None,
        )
        [opened] = opens(user)
        assert opened["app"]["version"] == "0.1.0-dev.1"
        assert opened["state"] == {"count": 0}
        assert w.check() is False  # nothing changed


def test_U5_a_save_reopens_the_surface_with_its_current_state(
    folder: Path, user: ScriptedUser, agent: Agent
) -> None:
    counter(agent)
    with Surface.from_dir(folder).watch(agent, "demo", state={"count": 0}, interval=HOUR) as w:
        user.click("demo", "inc")
        user.click("demo", "inc")  # the user's doing: the state is now {"count": 2}
        revision = user.host.surfaces["demo"].revision

        save(folder / "index.html", HTML.replace("+1", "add one"))
        assert w.check() is True

        latest = opens(user)[-1]
        assert latest["app"]["html"] == HTML.replace("+1", "add one")
        assert latest["app"]["version"] == "0.1.0-dev.2"
        assert latest["state"] == {"count": 2}  # what the user did survives the edit
        instance = user.host.surfaces["demo"]
        assert instance.revision == revision + 1  # replaced (U1), not closed and opened
        assert not [e for e in user.sent() if e["type"] == "lineup.v1.ui.close"]
        assert (w.version, w.reloads, w.surface.html) == ("0.1.0-dev.2", 1, instance.app.html)

        user.click("demo", "inc")  # the new code runs with the same agent behind it
        assert user.host.surfaces["demo"].state == {"count": 3}


def test_a_patch_between_saves_is_the_state_carried(
    folder: Path, user: ScriptedUser, agent: Agent
) -> None:
    with Surface.from_dir(folder).watch(agent, "demo", state={"a": 1}, interval=HOUR) as w:
        agent.patch("demo", {"a": 2, "b": [1, 2]})
        save(folder / "main.js", JS + "\n// more")
        assert w.check() is True
        assert opens(user)[-1]["state"] == {"a": 2, "b": [1, 2]}
        assert opens(user)[-1]["app"]["js"] == JS + "\n// more"


def test_a_new_css_file_is_a_change(tmp_path: Path, user: ScriptedUser, agent: Agent) -> None:
    folder = make_folder(tmp_path, index_html=HTML)
    with Surface.from_dir(folder).watch(agent, "demo", interval=HOUR) as w:
        save(folder / "look.css", CSS)
        assert w.check() is True
        assert user.host.surfaces["demo"].app.css == CSS
        assert w.surface.files == ("index.html", "look.css")


def test_a_save_that_changes_nothing_reopens_nothing(
    folder: Path, user: ScriptedUser, agent: Agent
) -> None:
    with Surface.from_dir(folder).watch(agent, "demo", interval=HOUR) as w:
        save(folder / "index.html", HTML)  # saved as it was: a new mtime, the same bundle
        assert w.check() is False
        save(folder / "README.md", "notes")  # not a surface file
        assert w.check() is False
        assert len(opens(user)) == 1 and w.version == "0.1.0-dev.1"


def test_a_save_after_from_dir_and_before_watch_is_seen(
    folder: Path, user: ScriptedUser, agent: Agent
) -> None:
    surface = Surface.from_dir(folder)
    save(folder / "index.html", "<p>edited meanwhile</p>")
    with surface.watch(agent, "demo", interval=HOUR) as w:
        assert opens(user)[-1]["app"]["html"] == HTML  # what was read, as read
        assert w.check() is True
        assert opens(user)[-1]["app"]["html"] == "<p>edited meanwhile</p>"


INVALID_SAVES: dict[str, Callable[[Path], None]] = {
    "a second html file": lambda folder: save(folder / "other.html", "<p>?</p>"),
    "not UTF-8": lambda folder: save(folder / "main.js", b"\xff"),
    "too big": lambda folder: save(folder / "index.html", "x" * (BUNDLE_LIMIT + 1)),
    "html removed": lambda folder: (folder / "index.html").unlink(),
}


@pytest.mark.parametrize("case", INVALID_SAVES)
def test_an_invalid_save_keeps_the_open_surface(
    folder: Path,
    user: ScriptedUser,
    agent: Agent,
    caplog: pytest.LogCaptureFixture,
    case: str,
) -> None:
    with Surface.from_dir(folder).watch(agent, "demo", state={"count": 5}, interval=HOUR) as w:
        before = user.host.surfaces["demo"]
        INVALID_SAVES[case](folder)
        assert w.check() is False
        assert isinstance(w.last_error, UsageError)
        assert str(w.last_error).startswith("[lineup] ")
        assert user.host.surfaces["demo"].app == before.app
        assert user.host.surfaces["demo"].state == {"count": 5}
        assert w.status == "watching"
        assert f"[lineup] surface 'demo' was not reopened, and stays as it was: {w.last_error}" in (
            caplog.text
        )
        warnings = len(caplog.records)
        assert w.check() is False  # the same broken files: not read, nor reported, again
        assert len(caplog.records) == warnings

        for name in ("other.html", "index.html", "main.js"):
            (folder / name).unlink(missing_ok=True)
        save(folder / "index.html", "<p>fixed</p>")
        assert w.check() is True
        assert w.last_error is None
        assert user.host.surfaces["demo"].app.html == "<p>fixed</p>"
        assert user.host.surfaces["demo"].state == {"count": 5}
        assert w.version == "0.1.0-dev.2"  # a refused save used no number


def test_a_reopen_the_host_refuses_keeps_the_open_surface(tmp_path: Path) -> None:
    with ScriptedUser(limits=Limits(max_bundle_bytes=1000)) as user:
        agent = user.connect_agent("agent_author")
        folder = make_folder(tmp_path, index_html=HTML)
        with Surface.from_dir(folder).watch(agent, "demo", interval=HOUR) as w:
            save(folder / "index.html", "x" * 2000)  # within the default limits read with
            assert w.check() is False  # ... and no exception out of the agent's open
            assert isinstance(w.last_error, ProtocolError) and w.last_error.rule == "U3"
            assert user.host.surfaces["demo"].app.html == HTML
            assert agent.errors[-1]["rule"] == "U3"  # the agent heard the refusal too (H3)
            assert w.status == "watching"
            # The host's limits, given to from_dir, catch it before anything is sent.
            with pytest.raises(UsageError, match=r"U3"):
                Surface.from_dir(folder, limits=user.host.limits)


def test_watch_raises_when_the_first_open_is_refused(tmp_path: Path) -> None:
    with ScriptedUser(limits=Limits(max_bundle_bytes=10)) as user:
        agent = user.connect_agent("agent_author")
        surface = Surface.from_dir(make_folder(tmp_path, index_html=HTML))
        with pytest.raises(ProtocolError, match=r"U3"):
            surface.watch(agent, "demo", interval=HOUR)
        assert "demo" not in user.host.surfaces


@pytest.mark.parametrize("who", ["user", "agent"])
def test_closing_the_surface_stops_watching(
    folder: Path, user: ScriptedUser, agent: Agent, who: str
) -> None:
    with Surface.from_dir(folder).watch(agent, "demo", interval=HOUR) as w:
        if who == "user":
            user.close_surface("demo")  # U10: a save must not bring it back
        else:
            agent.close("demo")
        save(folder / "index.html", "<p>edited</p>")
        assert w.check() is False
        assert w.status == "closed"
        assert "demo" not in user.host.surfaces
        assert len(opens(user)) == 1


def test_another_open_of_the_instance_stops_watching(
    folder: Path, user: ScriptedUser, agent: Agent
) -> None:
    first = Surface.from_dir(folder).watch(agent, "demo", interval=HOUR)
    agent.open("demo", html="<p>the agent's own</p>")
    save(folder / "index.html", "<p>edited</p>")
    assert first.check() is False
    assert first.status == "replaced"
    assert user.host.surfaces["demo"].app.html == "<p>the agent's own</p>"


def test_a_second_watcher_takes_the_instance_over(
    folder: Path, user: ScriptedUser, agent: Agent
) -> None:
    # Running the watching cell again makes a second watcher: the first one steps aside.
    first = Surface.from_dir(folder).watch(agent, "demo", interval=HOUR)
    with Surface.from_dir(folder).watch(agent, "demo", interval=HOUR) as second:
        save(folder / "index.html", "<p>edited</p>")
        assert first.check() is False
        assert first.status == "replaced"
        assert second.check() is True
        assert len(opens(user)) == 3


def test_stop_is_final_and_idempotent(folder: Path, user: ScriptedUser, agent: Agent) -> None:
    with Surface.from_dir(folder).watch(agent, "demo", interval=HOUR) as w:
        w.stop()
        w.stop()
        assert w.status == "stopped"
        save(folder / "index.html", "<p>edited</p>")
        assert w.check() is False
    assert w.status == "stopped"  # leaving the with block stops it once more: nothing happens
    assert user.host.surfaces["demo"].app.html == HTML  # the surface stays open as it was
    assert len(opens(user)) == 1


@pytest.mark.parametrize("interval", [0, -1, math.nan, math.inf, True, "1"])
def test_interval_is_a_positive_number_of_seconds(
    folder: Path, user: ScriptedUser, agent: Agent, interval: Any
) -> None:
    with pytest.raises(UsageError, match=r"^\[lineup\] interval is a positive number"):
        Surface.from_dir(folder).watch(agent, "demo", interval=interval)
    assert "demo" not in user.host.surfaces  # nothing was opened


@pytest.mark.parametrize(
    ("version", "first", "second", "release"),
    [
        ("0.1.0", "0.1.0-dev.1", "0.1.0-dev.2", "0.1.0"),
        ("1.0.0-rc.1", "1.0.0-rc.1.dev.1", "1.0.0-rc.1.dev.2", "1.0.0"),
        ("2.0.0+build.7", "2.0.0-dev.1+build.7", "2.0.0-dev.2+build.7", "2.0.0"),
    ],
)
def test_each_reopen_carries_a_higher_version(
    folder: Path,
    user: ScriptedUser,
    agent: Agent,
    version: str,
    first: str,
    second: str,
    release: str,
) -> None:
    with Surface.from_dir(folder, version=version).watch(agent, "demo", interval=HOUR) as w:
        save(folder / "index.html", "<p>edited</p>")
        assert w.check() is True
    assert [payload["app"]["version"] for payload in opens(user)] == [first, second]
    # SemVer precedence: each build after the one before, all before the release itself.
    assert semver_key(first) < semver_key(second) < semver_key(release)


def test_an_app_folder_is_watched_through_its_manifest(
    tmp_path: Path, user: ScriptedUser, agent: Agent
) -> None:
    folder = app_folder(tmp_path, "main")
    with Surface.from_dir(folder).watch(agent, "demo", interval=HOUR) as w:
        save(folder / "img" / "dot.svg", DOT.replace(b"r='1'", b"r='2'"))  # an asset, in img/
        assert w.check() is True
        assert "data:image/svg+xml;base64," in user.host.surfaces["demo"].app.html
        assert user.host.surfaces["demo"].app.html != opens(user)[0]["app"]["html"]

        manifest = json.loads((folder / "lineup-app.json").read_text())
        save(folder / "lineup-app.json", json.dumps({**manifest, "version": "1.1.0"}))
        assert w.check() is True
        assert user.host.surfaces["demo"].app.version == "1.1.0-dev.3"


# ---- the poller --------------------------------------------------------------------------


def reopen_threads(user: ScriptedUser) -> list[int]:
    """Collects the thread of every ui.open the host takes from now on."""
    threads: list[int] = []
    user.host.watch_surfaces(
        lambda change: threads.append(threading.get_ident()) if change.kind == "open" else None
    )
    return threads


def watching_threads() -> list[threading.Thread]:
    """The poller threads of instance 'polled' (each test here watches one of its own)."""
    return [t for t in threading.enumerate() if t.name == "lineup-watch-polled"]


def test_without_an_event_loop_a_thread_polls(
    folder: Path, user: ScriptedUser, agent: Agent
) -> None:
    threads = reopen_threads(user)
    with Surface.from_dir(folder).watch(agent, "polled", interval=0.01) as w:
        assert len(watching_threads()) == 1
        save(folder / "index.html", "<p>edited</p>")
        user.wait_for(lambda: w.reloads == 1, "the watcher to reopen the surface")
        assert user.host.surfaces["polled"].app.html == "<p>edited</p>"
        assert threads[-1] != threading.get_ident()  # a script has no loop to hand it to
    user.wait_for(lambda: not watching_threads(), "the watching thread to end")


def test_in_an_event_loop_a_task_on_it_polls(
    folder: Path, user: ScriptedUser, agent: Agent
) -> None:
    # A notebook cell runs inside the kernel's loop: every reopen must happen on that thread.
    threads = reopen_threads(user)

    async def cell() -> None:
        with Surface.from_dir(folder).watch(agent, "polled", interval=0.01) as w:
            assert not watching_threads()
            save(folder / "index.html", "<p>edited</p>")
            for _ in range(3000):  # 30 s at most: a guard against a hang, not a timing
                if w.reloads:
                    break
                await asyncio.sleep(0.01)
            assert w.reloads == 1
        for _ in range(100):  # let the loop run the cancelled task to its end
            if asyncio.all_tasks() == {asyncio.current_task()}:
                break
            await asyncio.sleep(0)
        assert asyncio.all_tasks() == {asyncio.current_task()}

    asyncio.run(cell())
    assert user.host.surfaces["polled"].app.html == "<p>edited</p>"
    assert set(threads) == {threading.get_ident()}


def test_a_failure_in_the_poller_is_reported_never_raised(
    folder: Path,
    user: ScriptedUser,
    agent: Agent,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # A bug of ours, simulated. pytest turns an exception escaping a thread into a failure.
    def broken(folder: Path, named: tuple[str, ...]) -> None:
        raise RuntimeError("a bug")

    with Surface.from_dir(folder).watch(agent, "polled", interval=0.01) as w:
        monkeypatch.setattr(authoring, "_stamp", broken)
        user.wait_for(lambda: w.status == "failed", "the watcher to give up")
        assert isinstance(w.last_error, RuntimeError)
        assert "[lineup] watching surface 'polled' failed; stopped" in caplog.text
        assert user.host.surfaces["polled"].app.html == HTML


def test_stop_ends_the_polling_thread_at_once(
    folder: Path, user: ScriptedUser, agent: Agent
) -> None:
    watcher = Surface.from_dir(folder).watch(agent, "polled", interval=HOUR)
    assert len(watching_threads()) == 1
    watcher.stop()  # not an hour from now: it holds the agent and the host meanwhile
    user.wait_for(lambda: not watching_threads(), "the watching thread to end")


def test_a_script_error_the_surface_reports_is_the_watchers_last_error(
    folder: Path, user: ScriptedUser, agent: Agent
) -> None:
    """Issue 15: a bundle that opened but throws (a syntax error saved, a bad onState) is
    not silent: its bridge's report is last_error, until a save that reopens it."""
    widget = user.host.widget
    with Surface.from_dir(folder).watch(agent, "demo", interval=HOUR) as w:
        problem = {"kind": "surface_problem", "instance_id": "demo", "level": "error"}
        view_sends(widget, {**problem, "text": "SyntaxError: Unexpected token"})
        assert isinstance(w.last_error, UsageError)
        assert "surface 'demo' (error): SyntaxError: Unexpected token" in str(w.last_error)
        save(folder / "main.js", JS + "\n// fixed")
        assert w.check() is True and w.last_error is None
