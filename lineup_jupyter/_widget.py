"""The Host's view in a notebook: an anywidget that mirrors the host's surfaces to the browser.

The only module that imports anywidget, ipywidgets or traitlets. The kernel holds the truth:
the synced ``surfaces`` and ``components`` traits carry the whole picture (every open surface
with its bundle and current state, every component) so a reloaded page, a second view or a
saved notebook can rebuild itself; they are edited in place and never re-sent, and each change
travels alone as a custom message (_view_feed.py), coalesced in the kernel so a burst of
patches sends one message per tick instead of tripping the server's rate limiter (measured:
thousands of rapid messages were dropped, leaving a stale frame). Messages are numbered: a
view that misses one asks for the whole picture again.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import io
import logging
import pathlib
import threading
from typing import TYPE_CHECKING, Any

import anywidget
import traitlets

from . import _inspector as inspector
from ._bus import Record
from ._errors import UsageError
from ._remote import HostThread
from ._view_feed import ViewFeed

if TYPE_CHECKING:
    from ._apps import AppCenter
    from ._host import Host

__all__ = ["AppCenterWidget", "HostWidget", "InspectorWidget"]

logger = logging.getLogger("lineup_jupyter")

MAX_EVENTS_PER_MESSAGE = 1000
COMPONENTS_INTERVAL = 0.05  # seconds between two sends of the components list, at least
STATIC = pathlib.Path(__file__).parent / "static"
BUNDLE = STATIC / "lineup.js"
APP_CENTER_BUNDLE = STATIC / "appcenter.js"
INSPECTOR_BUNDLE = STATIC / "inspector.js"
INSPECTOR_INTERVAL = 0.25  # seconds between two sends of new records to the inspector, at least
_MISSING_BUNDLE = """
export default { render({ el }) {
  el.textContent = "[lineup] The front end is not built: run `pip install -e .` (or ./dev setup) "
    + "in the lineup-jupyter checkout, then restart the kernel.";
} };
"""


class HostWidget(anywidget.AnyWidget):
    """What ``display(host)`` shows. Made by the host; one per host, any number of views."""

    _esm = BUNDLE if BUNDLE.exists() else _MISSING_BUNDLE
    surfaces = traitlets.List(trait=traitlets.Dict()).tag(sync=True)
    # The standard components as views draw them (H12): markdown already sanitized (H15).
    components = traitlets.List(trait=traitlets.Dict()).tag(sync=True)
    # Agents outside the kernel and how they are (H42): a crash shows here, not only in a log.
    agents = traitlets.List(trait=traitlets.Dict()).tag(sync=True)
    config = traitlets.Dict().tag(sync=True)

    def __init__(self, host: Host, **config: Any) -> None:
        super().__init__()
        if not BUNDLE.exists():
            logger.warning("[lineup] %s is missing: the front end was not built", BUNDLE)
        self._host = host
        self.config = config
        # The lists are the traits' own: the feed edits them in place (see _view_feed.py).
        self.surfaces = []
        self.components = []
        self._feed = ViewFeed(
            lambda content: self.send(content),  # looked up on each send: tests replace it
            self.surfaces,
            self.components,
            interval=COMPONENTS_INTERVAL,
        )
        self._feed.start(list(host.surfaces.values()), host.components.values())
        host.watch_surfaces(self._feed.on_surface)
        host.watch_components(self._feed.on_component)
        # Connections change on transport threads; the trait is set on the kernel's thread.
        self._host_thread = HostThread()
        self._refresh_agents()
        host.watch_connections(self._on_connection_change)
        self.on_msg(self._on_message)
        # Consent cards (js/prompts.js): each change of the waiting calls goes to every view
        # as a message, never a synced trait (_consent.py says why).
        consent = host._broker.views
        consent.watch(lambda: self._send_consent(consent.update()))

    # ---- kernel -> browser ---------------------------------------------------------

    def _send_consent(self, message: dict[str, Any] | None) -> None:
        if message is not None:
            self.send(message)

    def _on_connection_change(self) -> None:
        self._host_thread.call(self._refresh_agents)

    def _refresh_agents(self) -> None:
        self.agents = [agent.view() for agent in self._host.remote_agents]

    # ---- browser -> kernel ---------------------------------------------------------

    def _on_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        kind = content.get("kind") if isinstance(content, dict) else None
        instance_id = content.get("instance_id") if isinstance(content, dict) else None
        if kind == "sync":
            self.send(self._feed.snapshot())
        elif kind == "event" and isinstance(instance_id, str):
            self._host.surface_message(instance_id, content.get("message"))
        elif kind == "events" and isinstance(content.get("items"), list):
            # Events batched by a busy view (js/state_queue.js EventBatcher), in order. The
            # view's rate limit bounds them; the cap only guards against a hand-made message.
            for item in content["items"][:MAX_EVENTS_PER_MESSAGE]:
                if isinstance(item, dict) and item.get("kind") == "event":  # never nested
                    self._on_message(_widget, item, _buffers)
        elif kind == "close" and isinstance(instance_id, str):
            self._host.user_close(instance_id)
        elif kind == "refused" and isinstance(instance_id, str):
            self._host.report_refused(instance_id, content)
        elif kind == "answer" and isinstance(content.get("component_id"), str):
            component_id = content["component_id"]
            error = self._host.answer(component_id, content.get("status"), content.get("value"))
            if error is not None:  # the view shows why, and the question stays open
                self._feed.flush_components()
                self.send(
                    {
                        "kind": "answer_refused",
                        "component_id": component_id,
                        "message": error.message,
                    }
                )
        elif kind in ("consent_sync", "consent_decide", "consent_revoke"):
            self._host._broker.views.message(content)
        else:  # only a bug of ours (or a hand-made comm message) gets here
            logger.warning(
                "[lineup] the view sent a message the kernel does not understand: %.200r", content
            )


class AppCenterWidget(anywidget.AnyWidget):
    """What ``display(host.apps)`` shows: the installed apps, their state, the last
    verification, and buttons to enable, disable, roll back and verify (docs/apps.md).

    The registry is the truth; the view only asks the kernel to act and redraws from the
    synced traits. Removing an app is left to Python and the CLI: it cannot be undone.
    """

    _esm = APP_CENTER_BUNDLE if APP_CENTER_BUNDLE.exists() else _MISSING_BUNDLE
    apps = traitlets.List(trait=traitlets.Dict()).tag(sync=True)
    trust = traitlets.Dict().tag(sync=True)  # BundleTrust.summary(): the mode is visible (H37)
    # app id -> problems found by the last verification ([] = every cached bundle verified)
    verification = traitlets.Dict().tag(sync=True)

    def __init__(self, center: AppCenter) -> None:
        super().__init__()
        self._center = center
        self._actions = {
            "enable": center.enable,
            "disable": center.disable,
            "rollback": center.rollback,
        }
        self.trust = center.trust.summary()
        self._refresh()
        center.watch(lambda _app_id, _change: self._refresh())
        self.on_msg(self._on_message)

    def _refresh(self) -> None:
        self.apps = [dataclasses.asdict(info) for info in self._center.list()]

    def _on_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        kind = content.get("kind") if isinstance(content, dict) else None
        app_id = content.get("app_id") if isinstance(content, dict) else None
        try:
            if kind == "refresh":  # another kernel or the CLI may have changed the registry
                self._refresh()
            elif kind == "verify":
                problems: dict[str, list[str]] = {}
                for result in self._center.verify():
                    found = problems.setdefault(result.app_id, [])
                    if not result.ok:
                        found.append(f"{result.version} {result.surface}: {result.problem}")
                self.verification = problems
                self._refresh()
            elif kind in self._actions and isinstance(app_id, str):
                self._actions[kind](app_id)  # the watcher redraws
            else:
                logger.warning("[lineup] the app center view sent %.200r", content)
        except UsageError as error:  # e.g. nothing to roll back to, or removed meanwhile
            self._refresh()
            self.send({"kind": "notice", "text": str(error).removeprefix("[lineup] ")})


class InspectorWidget(anywidget.AnyWidget):
    """What ``display(host.inspector)`` shows: the conversation as the host's history keeps
    it, with refusals, capability calls, inventory revisions and surface states
    (docs/agents.md, "The inspector"). One per host, any number of views.

    Everything travels as messages, nothing as synced traits: the history is the truth and a
    view asks for it when it mounts (a reload, a second view, a restored cell). New records
    go out at most every INSPECTOR_INTERVAL seconds, so a flood of patches costs the
    inspector a few messages a second, not one per patch.
    """

    _esm = INSPECTOR_BUNDLE if INSPECTOR_BUNDLE.exists() else _MISSING_BUNDLE

    def __init__(self, host: Host) -> None:
        super().__init__()
        self._host = host
        self._sent_seq = 0  # the last record sent to the views
        self._summary = inspector.Summary(host.history.size)  # of the records sent
        self._flush: asyncio.TimerHandle | None = None
        self._flushed = 0.0
        self._host_thread = HostThread()  # where the kernel's loop runs, if it does
        self._sending = threading.Lock()
        host.history.watch(self._on_record)
        self.on_msg(self._on_message)

    def _summarized(self, records: list[Record]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """Each record as a view gets it, and the summary with them added: one parse each."""
        shown = []
        for record in records:
            whole = record.to_json()
            self._summary.add(whole)
            shown.append(inspector.preview(whole))
        summary = {
            "calls": self._summary.calls(self._host.pending_calls),
            "inventories": self._summary.inventories(),
            "surfaces": inspector.surfaces(self._host.surfaces),
        }
        return shown, summary

    def _on_record(self, _record: Record) -> None:
        self._host_thread.call(self._schedule)  # added on another thread: sent from the kernel's

    def _schedule(self) -> None:
        if self._flush is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no event loop at all (a script, a test): send now
            self._send_new()
            return
        wait = self._flushed + INSPECTOR_INTERVAL - loop.time()
        self._flush = loop.call_later(max(0.0, wait), self._send_new)

    def _send_new(self) -> None:
        if self._flush is not None:
            self._flush.cancel()
            self._flush = None
        with contextlib.suppress(RuntimeError):
            self._flushed = asyncio.get_running_loop().time()
        with self._sending:  # without a loop, records may come on several threads at once
            history = self._host.history
            new = history.since(self._sent_seq)  # not a scan of the whole history
            if not new:
                return
            after, self._sent_seq = self._sent_seq, new[-1].seq
            records, summary = self._summarized(new)
            self.send(
                {
                    "kind": "records",
                    "after": after,
                    "records": records,
                    "dropped": history.dropped,
                    "summary": summary,
                }
            )

    def _on_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        kind = content.get("kind") if isinstance(content, dict) else None
        history = self._host.history
        if kind == "sync":  # a view starts (again): everything the history still has
            with self._sending:
                everything = list(history)
                self._sent_seq = everything[-1].seq if everything else 0
                self._summary = inspector.Summary(history.size)
                records, summary = self._summarized(everything)
                self.send(
                    {
                        "kind": "reset",
                        "records": records,
                        "size": history.size,
                        "dropped": history.dropped,
                        "summary": summary,
                    }
                )
        elif kind == "states" and isinstance(content.get("instance_id"), str):
            instance_id = content["instance_id"]
            states = self._host.state_history(instance_id)
            self.send(
                {
                    "kind": "states",
                    "instance_id": instance_id,
                    "states": [
                        {"revision": s.revision, "time": s.time, "state": s.state} for s in states
                    ],
                }
            )
        elif kind == "export":
            text = io.StringIO()
            count = history.export(text)
            filename = f"lineup-{self._host.conversation_id}-history.jsonl"
            self.send(
                {"kind": "export", "filename": filename, "count": count},
                buffers=[text.getvalue().encode("utf-8")],
            )
        else:
            logger.warning("[lineup] the inspector view sent %.200r", content)
