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

import contextlib
import dataclasses
import io
import logging
import pathlib
import threading
from collections.abc import Callable
from html import escape
from typing import TYPE_CHECKING, Any

import anywidget
import traitlets

from ..appcenter._apps import shipped_apps
from ..core import _view_protocol as vp
from ..core._bus import Record
from ..core._views import Views
from ..host import _inspector as inspector
from ..protocol._errors import ProtocolError, UsageError
from ..runtime._pending import Pending
from ..runtime._threads import HostThread, Pacer
from . import _static as static
from . import _view_messages as view_messages
from ._view_feed import ViewFeed

if TYPE_CHECKING:
    from ..appcenter._apps import AppCenter
    from ..capabilities._consent import ConsentViews
    from ..host._host import Host
    from ..host._view_port import ViewPort

__all__ = [
    "VIEWS",
    "AppCenterWidget",
    "HostWidget",
    "InspectorWidget",
    "WaitingWidget",
    "point_to",
]

logger = logging.getLogger("lineup_jupyter")

# What a surface's bridge reports (js/bridge.js): uncaught errors and rejections, its console.
SURFACE_PROBLEM_LEVELS = ("error", "rejection", "console.error", "console.warn", "silent")
COMPONENTS_INTERVAL = 0.05  # seconds between two sends of the components list, at least
STATIC = pathlib.Path(__file__).parent.parent / "static"
BUNDLE = STATIC / "lineup.js"
APP_CENTER_BUNDLE = STATIC / "appcenter.js"
INSPECTOR_BUNDLE = STATIC / "inspector.js"
WAITING_BUNDLE = STATIC / "waiting.js"
INSPECTOR_INTERVAL = 0.25  # seconds between two sends of new records to the inspector, at least
_MISSING_BUNDLE = """
export default { render({ el }) {
  el.textContent = "[lineup] The front end is not built: run `pip install -e .` (or ./dev setup) "
    + "in the lineup-jupyter checkout, then restart the kernel.";
} };
"""


def _with_static(bundle: Any, text: str, html: str) -> Any:
    """The widget's MIME bundle plus a static view for where no widget can be drawn
    (_static.py): a saved notebook on GitHub, nbviewer, nbconvert, an untrusted notebook."""
    static = {"text/plain": text, "text/html": html}
    if isinstance(bundle, tuple):  # anywidget: (data, metadata)
        data, metadata = bundle
        return {**data, **static}, metadata
    if isinstance(bundle, dict):
        return {**bundle, **static}
    return bundle


class HostWidget(anywidget.AnyWidget):
    """What ``display(host)`` shows. Made by the host; one per host, any number of views."""

    _esm = BUNDLE if BUNDLE.exists() else _MISSING_BUNDLE
    surfaces = traitlets.List(trait=traitlets.Dict()).tag(sync=True)
    # The standard components as views draw them (H12): markdown already sanitized (H15).
    components = traitlets.List(trait=traitlets.Dict()).tag(sync=True)
    # Agents outside the kernel and how they are (H42): a crash shows here, not only in a log.
    agents = traitlets.List(trait=traitlets.Dict()).tag(sync=True)
    # What the user's own handlers raised, newest last (_problems.py): shown with the traceback.
    problems = traitlets.List(trait=traitlets.Dict()).tag(sync=True)
    config = traitlets.Dict().tag(sync=True)

    def __init__(self, host: Host, port: ViewPort, consent: ConsentViews, **config: Any) -> None:
        super().__init__()
        if not BUNDLE.exists():
            logger.warning("[lineup] %s is missing: the front end was not built", BUNDLE)
        self._host = host
        self._port = port  # the host's calls only this widget makes (_view_port.py)
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
        self._feed.start(
            list(host.surfaces.values()), host.components.values(), host.mcp_apps.specs()
        )
        host.watch_surfaces(self._feed.on_surface)
        host.watch_components(self._feed.on_component)
        # MCP apps change on the MCP loop's thread too (a tool's result): fed from the kernel's.
        host.mcp_apps.watch(
            lambda op: self._host_thread.call(lambda: self._feed.on_mcp(op), "showing an MCP app")
        )
        # Connections change on transport threads; the trait is set on the kernel's thread.
        self._host_thread = HostThread()
        self._refresh_agents()
        port.watch_connections(self._on_connection_change)
        self._refresh_problems()
        host.problems.watch(
            lambda: self._host_thread.call(self._refresh_problems, "showing the problems")
        )
        # Consent cards (js/prompts.js): each change of the waiting calls goes to every view
        # as a message, never a synced trait (_consent.py says why).
        self._consent = consent
        consent.watch(lambda: self._send_consent(consent.update()))
        self._handlers = self._dispatch_table()
        self.on_msg(self._on_message)

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return _with_static(super()._repr_mimebundle_(**kwargs), *static.host_static(self._host))

    # ---- kernel -> browser ---------------------------------------------------------

    def _send_consent(self, message: dict[str, Any] | None) -> None:
        if message is not None:
            self.send(message)

    def _on_connection_change(self) -> None:
        self._host_thread.call(self._refresh_agents, "showing the agents' connections")

    def _refresh_agents(self) -> None:
        self.agents = [agent.view() for agent in self._host.remote_agents] + [
            server.view() for server in self._host.mcp_servers
        ]

    def _refresh_problems(self) -> None:
        # Bounded: the host keeps the newest few (PROBLEMS_KEPT), each traceback cut.
        self.problems = [problem.to_view() for problem in self._host.problems]

    # ---- browser -> kernel: each kind of vp.HOST_TAKES, checked first (H38) ----------

    def _on_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        view_messages.handle(self._host, content, vp.HOST_TAKES, self._handlers)

    def _dispatch_table(self) -> view_messages.Handlers:
        consent = self._consent.message
        return {
            "sync": self._on_sync,
            "event": self._on_event,
            "events": self._on_events,
            "close": self._on_close,
            "refused": self._on_refused,
            "answer": self._on_answer,
            "consent_sync": consent,
            "consent_decide": consent,
            "consent_revoke": consent,
            "clear_problems": self._on_clear_problems,
            "surface_problem": self._on_surface_problem,
            "mcp_request": self._on_mcp_request,
            "mcp_traffic": self._on_mcp_traffic,
            "mcp_refused": self._on_mcp_refused,
            "mcp_grant": self._on_mcp_grant,
            "mcp_close": self._on_mcp_close,
        }

    def _on_sync(self, _message: vp.Sync) -> None:
        self.send(self._feed.snapshot())

    def _on_event(self, message: vp.RelayedEvent) -> None:
        self._host.surface_message(message["instance_id"], message["message"])

    def _on_events(self, message: vp.EventBatch) -> None:
        # Events and refusals batched by a busy view (js/state_queue.js EventBatcher), in
        # order; both count against the view's rate limit. Each item is checked as one
        # "event" or "refused" message (never a batch in a batch; at most MAX_EVENTS).
        for item in message["items"]:
            view_messages.handle(self._host, item, vp.EVENT_ITEM, self._handlers)

    def _on_close(self, message: vp.CloseSurface) -> None:
        # Closed meanwhile (another view's click, its agent): the refusal is recorded.
        with contextlib.suppress(ProtocolError):
            self._host.user_close(message["instance_id"])

    def _on_refused(self, message: vp.Refused) -> None:
        self._port.report_refused(message["instance_id"], dict(message))

    def _on_answer(self, message: vp.Answer) -> None:
        component_id = message["component_id"]
        try:
            self._host.answer(component_id, message["status"], message.get("value"))
        except ProtocolError as error:  # the view shows why, and the question stays open
            self._feed.flush_components()
            refused: vp.AnswerRefused = {
                "kind": "answer_refused",
                "component_id": component_id,
                "message": error.message,
            }
            self.send(refused)

    def _on_clear_problems(self, _message: vp.ClearProblems) -> None:
        self._host.problems.clear()

    def _on_surface_problem(self, message: vp.SurfaceProblem) -> None:
        """What a surface's script got wrong, as its bridge reported it (an uncaught error, a
        rejected promise, console.error or console.warn, a script that never ran): text only,
        bounded by the bridge, the shell's rate limit and Problems; shown like a handler's."""
        instance_id = message["instance_id"]
        surface = self._host.surfaces.get(instance_id)
        if surface is None:
            return  # closed meanwhile: nobody to show it next to
        level = message.get("level")
        level = level if level in SURFACE_PROBLEM_LEVELS else "error"
        text = message.get("text")
        self._host.problems.add(
            f"surface {instance_id!r} ({level})",
            text[:500] if text is not None else "(no message)",
            message.get("stack", "")[:4000],
            agent_id=surface.owner,
            instance_id=instance_id,
            source="surface",
        )

    # ---- browser -> kernel: an MCP app's messages, as its frame's host relayed them --

    def _on_mcp_request(self, message: vp.McpRequest) -> None:
        self._host.mcp_apps.request(
            message["app_id"], message["id"], message["method"], message.get("params", {})
        )

    def _on_mcp_traffic(self, message: vp.McpTraffic) -> None:
        self._host.mcp_apps.traffic(message["app_id"], message["items"])

    def _on_mcp_refused(self, message: vp.McpRefused) -> None:
        self._host.mcp_apps.refused(message["app_id"], dict(message))

    def _on_mcp_grant(self, message: vp.McpGrant) -> None:
        self._host.mcp_apps.grant(
            message["app_id"], message["directive"], message["domain"], message["allow"]
        )

    def _on_mcp_close(self, message: vp.McpClose) -> None:
        self._host.mcp_apps.close(message["app_id"])


class AppCenterWidget(anywidget.AnyWidget):
    """What ``display(host.apps)`` shows: the installed apps, their state, the last
    verification, and buttons to enable, disable, roll back, remove (asked twice: it cannot
    be undone) and verify; the shipped apps not installed yet, with Install (docs/apps.md).

    The registry is the truth; the view only asks the kernel to act and redraws from the
    synced traits.
    """

    _esm = APP_CENTER_BUNDLE if APP_CENTER_BUNDLE.exists() else _MISSING_BUNDLE
    apps = traitlets.List(trait=traitlets.Dict()).tag(sync=True)
    trust = traitlets.Dict().tag(sync=True)  # BundleTrust.summary(): the mode is visible (H37)
    # app id -> problems found by the last verification ([] = every cached bundle verified)
    verification = traitlets.Dict().tag(sync=True)
    # The shipped apps that are not installed: [{id, name}], each with an Install button.
    available = traitlets.List(trait=traitlets.Dict()).tag(sync=True)

    def __init__(self, center: AppCenter) -> None:
        super().__init__()
        self._center = center
        self._actions: dict[str, Callable[[str], object]] = {
            "enable": center.enable,
            "disable": center.disable,
            "rollback": center.rollback,
            "remove": center.remove,
            "install": self._install_shipped,
        }
        self._handlers: view_messages.Handlers = {
            "refresh": self._on_refresh,
            "verify": self._on_verify,
            **dict.fromkeys(self._actions, self._on_action),
        }
        self.trust = center.trust.summary()
        self._refresh()
        center.watch(lambda _app_id, _change: self._refresh())
        self.on_msg(self._on_message)

    def _refresh(self) -> None:
        installed = self._center.list()
        self.apps = [dataclasses.asdict(info) for info in installed]
        ids = {info.id for info in installed}
        self.available = [
            {"id": app_id, "name": folder.name}
            for app_id, folder in shipped_apps().items()
            if app_id not in ids
        ]

    def _install_shipped(self, app_id: str) -> object:
        """Only a shipped app installs from the view: any other source is the user's to name
        in Python or the CLI, never a string a view sends."""
        if app_id not in shipped_apps():
            raise UsageError(f"[lineup] {app_id!r} is not an app shipped with lineup-jupyter")
        return self._center.install(app_id)

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return _with_static(super()._repr_mimebundle_(**kwargs), *static.apps_static(self._center))

    # ---- browser -> kernel: each kind of vp.APP_CENTER_TAKES, checked first (H38) ----

    def _on_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        view_messages.handle(None, content, vp.APP_CENTER_TAKES, self._handlers)

    def _on_refresh(self, _message: vp.Refresh) -> None:
        self._refresh()  # another kernel or the CLI may have changed the registry

    def _on_verify(self, _message: vp.Verify) -> None:
        problems: dict[str, list[str]] = {}
        for result in self._center.verify():
            found = problems.setdefault(result.app_id, [])
            if not result.ok:
                found.append(f"{result.version} {result.surface}: {result.problem}")
        self.verification = problems
        self._refresh()

    def _on_action(self, message: vp.AppAction) -> None:
        try:
            self._actions[message["kind"]](message["app_id"])  # the watcher redraws
        except UsageError as error:  # e.g. nothing to roll back to, or removed meanwhile
            self._refresh()
            notice: vp.Notice = {"kind": "notice", "text": str(error).removeprefix("[lineup] ")}
            self.send(notice)


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
        self._deciders: dict[str, str | None] = {}  # call_id -> decided_by, from the audit
        # New records go out at most every INSPECTOR_INTERVAL, from the kernel's thread.
        self._pacer = Pacer(INSPECTOR_INTERVAL, self._send_new, "sending records to the inspector")
        self._host_thread = HostThread()  # where the kernel's loop runs, if it does
        self._sending = threading.Lock()
        host.history.watch(self._on_record)
        self._handlers: view_messages.Handlers = {
            "sync": self._on_sync,
            "states": self._on_states,
            "export": self._on_export,
        }
        self.on_msg(self._on_message)

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return _with_static(
            super()._repr_mimebundle_(**kwargs), *static.inspector_static(self._host)
        )

    def _summarized(
        self, records: list[Record]
    ) -> tuple[list[dict[str, Any]], vp.InspectorSummary]:
        """Each record as a view gets it, and the summary with them added: one parse each."""
        shown = []
        for record in records:
            whole = record.to_json()
            self._summary.add(whole)
            shown.append(inspector.preview(whole))
        summary: vp.InspectorSummary = {
            "calls": [
                self._with_decider(call) for call in self._summary.calls(self._host.pending_calls)
            ],
            "inventories": self._summary.inventories(),
            "surfaces": inspector.surfaces(self._host.surfaces),
        }
        return shown, summary

    def _with_decider(self, call: dict[str, Any]) -> dict[str, Any]:
        """Who decided an answered call (the user, the policy, a remembered grant, expiry),
        as the audit recorded it (C13): read once per call, then kept."""
        call_id = call["call_id"]
        if call.get("answered") is None:
            return call
        if call_id not in self._deciders:
            rows = self._host.audit.query(call_id=call_id, limit=1)
            self._deciders[call_id] = rows[0]["decided_by"] if len(rows) else None
            if len(self._deciders) > 2 * self._host.history.size:  # as bounded as the summary
                del self._deciders[next(iter(self._deciders))]
        return {**call, "decided_by": self._deciders[call_id]}

    def _on_record(self, _record: Record) -> None:
        # Added on another thread: paced and sent from the kernel's.
        self._host_thread.call(self._pacer.request, "scheduling the inspector's records")

    def _send_new(self) -> None:
        with self._sending:  # without a loop, records may come on several threads at once
            history = self._host.history
            new = history.since(self._sent_seq)  # not a scan of the whole history
            if not new:
                return
            after, self._sent_seq = self._sent_seq, new[-1].seq
            records, summary = self._summarized(new)
            message: vp.Records = {
                "kind": "records",
                "after": after,
                "records": records,
                "dropped": history.dropped,
                "summary": summary,
            }
            self.send(message)

    # ---- browser -> kernel: each kind of vp.INSPECTOR_TAKES, checked first (H38) -----

    def _on_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        view_messages.handle(self._host, content, vp.INSPECTOR_TAKES, self._handlers)

    def _on_sync(self, _message: vp.InspectorSync) -> None:
        """A view starts (again): everything the history still has."""
        history = self._host.history
        with self._sending:
            everything = list(history)
            self._sent_seq = everything[-1].seq if everything else 0
            self._summary = inspector.Summary(history.size)
            records, summary = self._summarized(everything)
            reset: vp.Reset = {
                "kind": "reset",
                "records": records,
                "size": history.size,
                "health_size": history.health_size,
                "dropped": history.dropped,
                "summary": summary,
            }
            self.send(reset)

    def _on_states(self, message: vp.StatesRequest) -> None:
        instance_id = message["instance_id"]
        states: vp.States = {
            "kind": "states",
            "instance_id": instance_id,
            "states": [
                {"revision": s.revision, "time": s.time, "state": s.state}
                for s in self._host.state_history(instance_id)
            ],
        }
        self.send(states)

    def _on_export(self, _message: vp.ExportRequest) -> None:
        text = io.StringIO()
        count = self._host.history.export(text)
        export: vp.Export = {
            "kind": "export",
            "filename": f"lineup-{self._host.conversation_id}-history.jsonl",
            "count": count,
        }
        self.send(export, buffers=[text.getvalue().encode("utf-8")])


class WaitingWidget(anywidget.AnyWidget):
    """The line a cell shows while it awaits the user (js/waiting.js): what is asked, a Show
    button that scrolls the host's card or question into view, then how it ended."""

    _esm = WAITING_BUNDLE if WAITING_BUNDLE.exists() else _MISSING_BUNDLE
    kind = traitlets.Unicode("call").tag(sync=True)  # "call" or "question"
    target = traitlets.Unicode().tag(sync=True)  # the call_id or component_id
    label = traitlets.Unicode().tag(sync=True)
    status = traitlets.Unicode("waiting").tag(sync=True)

    def __init__(self, **traits: Any) -> None:
        super().__init__(**traits)
        self.on_msg(self._on_message)

    def _on_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        view_messages.handle(None, content, vp.WAITING_TAKES, {"sync": self._on_sync})

    def _on_sync(self, _message: vp.WaitingSync) -> None:
        """A line asks whether a kernel holds its wait: one restored from a saved notebook
        gets no answer and says it is a picture (js/waiting.js)."""
        live: vp.WaitingLive = {"kind": "live"}
        self.send(live)

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        line = f"{self.label}: {self.status}"
        return _with_static(super()._repr_mimebundle_(**kwargs), line, f"<p>{escape(line)}</p>")


def _executing_a_cell() -> bool:
    """Whether this code runs for a cell (its output is where the user looks), not for a comm
    message or on another thread. ipykernel keeps the parent request per context."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    kernel = getattr(get_ipython(), "kernel", None)
    if kernel is None:
        return False
    try:
        parent = kernel.get_parent("shell")
    except Exception:
        return False
    return bool(parent) and parent.get("header", {}).get("msg_type") == "execute_request"


def point_to(kind: str, target: str, label: str, outcome: Pending[Any]) -> WaitingWidget | None:
    """In a cell that awaits ``outcome``, display where the user answers it, and how it ended."""
    if not _executing_a_cell():
        return None
    from IPython.display import display

    widget = WaitingWidget(kind=kind, target=target, label=label)
    # A handle on the output: its saved and exported picture (the static text/html) is
    # written again with how the wait ended, instead of "waiting" above the cell's result.
    handle = display(widget, display_id=True)  # type: ignore[no-untyped-call]  # IPython ships no types
    home = HostThread()  # the cell's loop: the value may come on another thread

    def show(text: str) -> None:
        widget.status = text
        if handle is not None:
            handle.update(widget)

    def ended(value: Any) -> None:
        status = getattr(value, "status", None)
        text = str(status) if kind == "call" else f"answered: {value!r}"
        if kind == "question" and value is None:
            text = "cancelled"
        home.call(lambda: show(text), "showing how a wait ended")

    outcome.add_done_callback(ended)
    return widget


# What the layers below make their views with (core/_views.py), never importing this module.
VIEWS = Views(
    host=HostWidget, inspector=InspectorWidget, app_center=AppCenterWidget, point_to=point_to
)
