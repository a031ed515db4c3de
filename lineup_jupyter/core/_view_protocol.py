"""Every comm message between a widget's kernel side and its views, defined once.

A view (js/widget.js, js/inspector.js, js/appcenter.js) and its widget (_widget.py) talk in
anywidget custom messages: JSON objects told apart by ``kind``. Each kind is a TypedDict here,
in both directions; the sets below say which widget takes or sends which kinds. Three things
are built from these definitions and nothing else:

- the checks a view's message passes before anything acts on it (_view_messages.py, H38):
  the fields each kind needs and the JSON types they may have;
- each widget's dispatch table, whose keys a test holds to the kinds the widget takes;
- js/view_protocol.js, the same messages as JSDoc typedefs for the browser, written by
  ``python -m lineup_jupyter.widgets._view_codegen`` and kept in sync by
  tests/widgets/test_view_protocol.py and ``./dev lint``.

A new view message is a TypedDict here, added to its widget's set, with a handler in the
widget's table; then rerun the generator (docs/architecture.md).
"""

# No `from __future__ import annotations`: the TypedDicts' NotRequired must be read at
# class creation for __required_keys__ to be right on every supported Python.
import typing
from collections.abc import Mapping
from typing import Any, Literal

from typing_extensions import NotRequired, TypedDict, get_type_hints

__all__ = [
    "APP_CENTER_SENDS",
    "APP_CENTER_TAKES",
    "EVENT_ITEM",
    "FEED_OPS",
    "HOST_SENDS",
    "HOST_TAKES",
    "INSPECTOR_SENDS",
    "INSPECTOR_TAKES",
    "SETS",
    "WAITING_SENDS",
    "WAITING_TAKES",
    "MessageSet",
]

# A field whose shape another module owns and checks (a surface's message, a component's
# view, a consent card); here it is any JSON value.
JSON = Any
JSONObject = dict[str, Any]


# ---- view -> kernel: the host view (js/widget.js, js/components.js, js/prompts.js) --------


class Sync(TypedDict):
    """A view starts (again): send the whole picture."""

    kind: Literal["sync"]


class RelayedEvent(TypedDict):
    """A surface's event, as its shell relayed it (S4: the view names the instance)."""

    kind: Literal["event"]
    instance_id: str
    message: JSON  # the surface message; the host checks it as any other (U7)


class Refused(TypedDict):
    """What the view refused of a surface, or stopped it for, told to its agent."""

    kind: Literal["refused"]
    instance_id: str
    code: NotRequired[str]
    rule: NotRequired[str]
    path: NotRequired[str]
    message: NotRequired[str]


class EventBatch(TypedDict):
    """Events and refusals a busy view batched (js/state_queue.js EventBatcher), in order."""

    kind: Literal["events"]
    items: list[RelayedEvent | Refused]  # each checked alone as an EVENT_ITEM


class CloseSurface(TypedDict):
    """The user closed a surface."""

    kind: Literal["close"]
    instance_id: str


class Answer(TypedDict):
    """The user answered or cancelled a question component."""

    kind: Literal["answer"]
    component_id: str
    status: str
    value: NotRequired[JSON]


class ConsentSync(TypedDict):
    """A view draws the consent cards: send them all (``consent``)."""

    kind: Literal["consent_sync"]


class ConsentDecide(TypedDict):
    """The user's decision on a waiting call (the broker checks the words)."""

    kind: Literal["consent_decide"]
    call_id: str
    decision: str
    remember: NotRequired[bool]
    typed_name: NotRequired[str | None]
    outcome: NotRequired[JSONObject]


class ConsentRevoke(TypedDict):
    """The user took back a remembered grant."""

    kind: Literal["consent_revoke"]
    capability: str
    session: NotRequired[JSON]  # whose grant (H27): an integer; absent: every identity's


class ClearProblems(TypedDict):
    """The user cleared the handlers' problems."""

    kind: Literal["clear_problems"]


class SurfaceProblem(TypedDict):
    """What a surface's script got wrong, as its bridge reported it (_widget.py bounds it)."""

    kind: Literal["surface_problem"]
    instance_id: str
    level: NotRequired[str]
    text: NotRequired[str]
    stack: NotRequired[str]


# ---- view -> kernel: MCP Apps in the host view (js/mcp_host.js; docs/mcp-apps.md) ------


class McpRequest(TypedDict):
    """An app's JSON-RPC request the kernel answers (with exactly one ``mcp_response``):
    ``tools/call``, ``ui/open-link``, ``ui/message``, ``ui/update-model-context``,
    ``resources/read``, ``resources/list``. The kernel checks ``method`` and ``params``."""

    kind: Literal["mcp_request"]
    app_id: str
    id: JSON  # the app's JSON-RPC id (a string or a number), echoed in the response
    method: str
    params: NotRequired[JSONObject]


class McpTrafficItem(TypedDict):
    """One JSON-RPC message between an app and the page; over 4 KiB as JSON, a ``preview``
    (its start) and its ``size`` instead of the ``message``."""

    dir: Literal["to_app", "from_app"]
    message: NotRequired[JSON]
    preview: NotRequired[str]
    size: NotRequired[int]


class McpTraffic(TypedDict):
    """The app's JSON-RPC traffic as the page saw it, batched (at most 50 items a second per
    app): recorded in the history for the inspector. The kernel checks each item."""

    kind: Literal["mcp_traffic"]
    app_id: str
    items: list[McpTrafficItem]


class McpRefused(TypedDict):
    """What the page refused of an app (a forged response id, a request before
    ``initialized``, an oversized message, a flood): recorded and shown."""

    kind: Literal["mcp_refused"]
    app_id: str
    code: str
    message: str
    path: NotRequired[str]


class McpGrant(TypedDict):
    """The user's answer on a grant card: ``directive`` is ``connectDomains`` or
    ``resourceDomains`` (the kernel checks it)."""

    kind: Literal["mcp_grant"]
    app_id: str
    directive: str
    domain: str
    allow: bool


class McpClose(TypedDict):
    """The user closed an app's card (the view sent ``ui/resource-teardown`` first)."""

    kind: Literal["mcp_close"]
    app_id: str


# ---- view -> kernel: the inspector (js/inspector.js) and the app center (js/appcenter.js) --


class InspectorSync(TypedDict):
    """An inspector view starts (again): everything the history still has (``reset``)."""

    kind: Literal["sync"]


class StatesRequest(TypedDict):
    """The states a surface went through, as the host keeps them."""

    kind: Literal["states"]
    instance_id: str


class ExportRequest(TypedDict):
    """The whole history as JSON Lines, for a download."""

    kind: Literal["export"]


class WaitingSync(TypedDict):
    """A waiting line starts (js/waiting.js): does a kernel hold its wait? (``live``)"""

    kind: Literal["sync"]


class Refresh(TypedDict):
    """Read the registry again: another kernel or the CLI may have changed it."""

    kind: Literal["refresh"]


class Verify(TypedDict):
    """Verify every cached bundle of every installed app."""

    kind: Literal["verify"]


class AppAction(TypedDict):
    """Act on one app; ``install`` only names an app shipped with lineup-jupyter."""

    kind: Literal["enable", "disable", "rollback", "remove", "install"]
    app_id: str


# ---- kernel -> view: the host view's feed (_view_feed.py) ---------------------------------


class AppInfo(TypedDict):
    id: str
    version: str
    name: str | None


class SurfaceSpec(TypedDict):
    """An open surface as a view builds its frame from: bundle, state, revision."""

    instance_id: str
    owner: str
    generation: int
    revision: int
    app: AppInfo
    html: str
    css: str
    js: str
    state: JSONObject


class OpenOp(TypedDict):
    """A surface opened or replaced (a new ``generation``: a new frame)."""

    op: Literal["open"]
    spec: SurfaceSpec


class CloseOp(TypedDict):
    op: Literal["close"]
    instance_id: str


class StateOp(TypedDict):
    """A replacing ``ui.patch``."""

    op: Literal["state"]
    instance_id: str
    generation: int
    revision: int
    state: JSONObject


class PatchOp(TypedDict):
    """The merge patches (RFC 7396) that take revision ``base`` to ``revision``."""

    op: Literal["patch"]
    instance_id: str
    generation: int
    base: int
    revision: int
    patches: list[JSONObject]


class ComponentOp(TypedDict):
    """A component as a view draws it, whole (with ``rev`` and ``order``)."""

    op: Literal["component"]
    view: JSONObject


class SpliceOp(TypedDict):
    """A markdown's ``html`` or a text's ``text`` loses its last ``cut`` UTF-16 units and
    gets ``add``: a streamed answer costs its new text."""

    op: Literal["splice"]
    component_id: str
    rev: int
    field: Literal["html", "text"]
    cut: int
    add: str


class RemovedOp(TypedDict):
    op: Literal["removed"]
    component_id: str


class McpCsp(TypedDict):
    """The domains of a ``ui://`` resource's ``_meta.ui.csp`` this host knows, per directive."""

    connectDomains: list[str]
    resourceDomains: list[str]


class McpRefusedCsp(TypedDict):
    """A declared domain this host never grants (``frameDomains``, ``baseUriDomains``)."""

    directive: str
    domain: str
    reason: str


class McpAppSpec(TypedDict):
    """An open MCP app as a view builds its frame from: the resource's HTML, the CSP as
    declared and as granted, the tool's arguments and, once known, its result or why it was
    cancelled (a reloaded view replays them). A new ``generation`` (after a grant) means a
    new frame. ``notes``: the newest lines its card shows (``mcp_note``)."""

    app_id: str
    agent: str  # the server's agent, mcp.<name>
    server: str
    server_version: str
    tool: str
    title: str
    resource_uri: str
    html: str
    csp: McpCsp
    granted: McpCsp
    refused_csp: list[McpRefusedCsp]
    owners: dict[str, str]  # host -> its registrable domain (protocol/_owners.py)
    prefers_border: bool | None
    arguments: JSONObject
    result: JSONObject | None  # the CallToolResult, as JSON
    cancelled: str | None  # why the tool call was cancelled (tool-cancelled's reason)
    generation: int
    notes: list[str]
    # Why it is not shown (its resource was refused: too large, not an app): a card that
    # says so, with no frame; html is empty and its tool was not called.
    refused: str | None


class McpOpenOp(TypedDict):
    """An MCP app opened, or a new generation of it (a new frame)."""

    op: Literal["mcp_open"]
    spec: McpAppSpec


class McpCloseOp(TypedDict):
    op: Literal["mcp_close"]
    app_id: str


class McpNotifyOp(TypedDict):
    """A notification for the app, by its full method name."""

    op: Literal["mcp_notify"]
    app_id: str
    method: Literal[
        "ui/notifications/tool-input",
        "ui/notifications/tool-input-partial",
        "ui/notifications/tool-result",
        "ui/notifications/tool-cancelled",
    ]
    params: JSONObject


class McpError(TypedDict):
    """A JSON-RPC error: -32601 method not found, -32602 invalid params, -32000 refused by
    the user or not allowed (``data``: ``{rule, reason}``)."""

    code: int
    message: str
    data: NotRequired[JSON]


class McpResponseOp(TypedDict):
    """The one answer to an app's ``mcp_request``: ``result`` or ``error``."""

    op: Literal["mcp_response"]
    app_id: str
    id: JSON
    result: NotRequired[JSONObject]
    error: NotRequired[McpError]


class McpNoteOp(TypedDict):
    """A line the app's card shows (a ui/message, a model-context update, a refusal): raw
    text, shown with honest_text."""

    op: Literal["mcp_note"]
    app_id: str
    text: str


FeedOp = (
    OpenOp
    | CloseOp
    | StateOp
    | PatchOp
    | ComponentOp
    | SpliceOp
    | RemovedOp
    | McpOpenOp
    | McpCloseOp
    | McpNotifyOp
    | McpResponseOp
    | McpNoteOp
)


class Feed(TypedDict):
    """Each change alone, numbered: a view that sees a gap in ``seq`` asks for ``sync``."""

    kind: Literal["feed"]
    seq: int
    ops: list[FeedOp]


class Snapshot(TypedDict):
    """The whole picture, the answer to ``sync``."""

    kind: Literal["snapshot"]
    seq: int
    surfaces: list[SurfaceSpec]
    components: list[JSONObject]
    mcp_apps: list[McpAppSpec]


class AnswerRefused(TypedDict):
    """The kernel refused an answer: the view says why and the question stays open."""

    kind: Literal["answer_refused"]
    component_id: str
    message: str


# ---- kernel -> view: consent cards (_consent.py, js/prompts.js) ---------------------------


class ConsentRefusal(TypedDict):
    call_id: str
    message: str


class Consent(TypedDict):
    """Every waiting call, grant and recent answer: the answer to ``consent_sync``."""

    kind: Literal["consent"]
    seq: int
    pending: list[JSONObject]  # call specs (_broker.py PendingCall.spec)
    remembered: list[JSONObject]  # {capability, agent, session, via} (_capabilities.Policy)
    recent: list[JSONObject]
    refused: NotRequired[ConsentRefusal]


class ConsentDelta(TypedDict):
    """What changed since the last consent message."""

    kind: Literal["consent_delta"]
    seq: int
    added: list[JSONObject]
    removed: list[str]
    remembered: NotRequired[list[JSONObject]]
    recent: NotRequired[list[JSONObject]]
    refused: NotRequired[ConsentRefusal]


# ---- kernel -> view: the inspector and the app center -------------------------------------


class InspectorSummary(TypedDict):
    calls: list[JSONObject]
    inventories: list[JSONObject]
    surfaces: list[JSONObject]


class Records(TypedDict):
    """New records of the history, after ``after``."""

    kind: Literal["records"]
    after: int
    records: list[JSONObject]
    dropped: int
    summary: InspectorSummary


class Reset(TypedDict):
    """Everything the history still has: the answer to the inspector's ``sync``."""

    kind: Literal["reset"]
    records: list[JSONObject]
    size: int
    # Health checks (Record.health) are kept apart, up to this many: the view does the same.
    health_size: int
    dropped: int
    summary: InspectorSummary


class PastState(TypedDict):
    """One of a surface's last states, as the inspector shows it (core's StateRevision)."""

    revision: int
    time: float  # seconds since the epoch
    state: JSONObject


class States(TypedDict):
    kind: Literal["states"]
    instance_id: str
    states: list[PastState]


class Export(TypedDict):
    """The history as JSON Lines, in the message's one buffer."""

    kind: Literal["export"]
    filename: str
    count: int


class WaitingLive(TypedDict):
    """The kernel holds this line's wait: the line is live, not a saved picture."""

    kind: Literal["live"]


class Notice(TypedDict):
    """Why the app center could not do what the user asked."""

    kind: Literal["notice"]
    text: str


# ---- the sets --------------------------------------------------------------------------


class MessageSet(Mapping[str, type]):
    """The kinds one side takes or sends, each with its TypedDict: ``set[kind]``."""

    def __init__(self, name: str, *messages: type, key: str = "kind") -> None:
        self.name = name
        self.key = key
        self.messages = messages
        self._by_kind: dict[str, type] = {}
        for message in messages:
            for kind in literal_values(message, key):
                if kind in self._by_kind:
                    raise ValueError(f"{name}: two messages of kind {kind!r}")
                self._by_kind[kind] = message

    def __getitem__(self, kind: str) -> type:
        return self._by_kind[kind]

    def __iter__(self) -> typing.Iterator[str]:
        return iter(self._by_kind)

    def __len__(self) -> int:
        return len(self._by_kind)

    # One set is one thing, whatever it holds: _view_messages caches its checks by set.
    __eq__ = object.__eq__
    __hash__ = object.__hash__


def literal_values(message: type, key: str = "kind") -> tuple[str, ...]:
    """The values a TypedDict's ``key`` field may have: its Literal's arguments."""
    hint = get_type_hints(message)[key]
    origin: Any = typing.get_origin(hint)
    if origin is not Literal:
        raise TypeError(f"{message.__name__}.{key} is not a Literal")
    return typing.get_args(hint)


HOST_TAKES = MessageSet(
    "HostViewMessage",
    Sync,
    RelayedEvent,
    EventBatch,
    CloseSurface,
    Refused,
    Answer,
    ConsentSync,
    ConsentDecide,
    ConsentRevoke,
    ClearProblems,
    SurfaceProblem,
    McpRequest,
    McpTraffic,
    McpRefused,
    McpGrant,
    McpClose,
)
EVENT_ITEM = MessageSet("EventItem", RelayedEvent, Refused)  # an item of "events", never a batch
INSPECTOR_TAKES = MessageSet("InspectorViewMessage", InspectorSync, StatesRequest, ExportRequest)
APP_CENTER_TAKES = MessageSet("AppCenterViewMessage", Refresh, Verify, AppAction)
WAITING_TAKES = MessageSet("WaitingViewMessage", WaitingSync)
HOST_SENDS = MessageSet("HostKernelMessage", Snapshot, Feed, AnswerRefused, Consent, ConsentDelta)
FEED_OPS = MessageSet("FeedOpMessage", *typing.get_args(FeedOp), key="op")
INSPECTOR_SENDS = MessageSet("InspectorKernelMessage", Records, Reset, States, Export)
APP_CENTER_SENDS = MessageSet("AppCenterKernelMessage", Notice)
WAITING_SENDS = MessageSet("WaitingKernelMessage", WaitingLive)
SETS = (  # every set, in the order js/view_protocol.js lists them
    HOST_TAKES,
    EVENT_ITEM,
    INSPECTOR_TAKES,
    APP_CENTER_TAKES,
    WAITING_TAKES,
    HOST_SENDS,
    FEED_OPS,
    INSPECTOR_SENDS,
    APP_CENTER_SENDS,
    WAITING_SENDS,
)
