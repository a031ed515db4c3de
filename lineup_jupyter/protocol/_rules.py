"""Every rule that can be checked on a message: patterns, limits, enums and the rule sentences.

This module is the one home of these values. The pydantic models use them, and
``_codegen`` writes them into the JSON Schema and into ``js/protocol.generated.js`` so the
browser checks exactly what the kernel checks. Patterns are written in the subset of regex
syntax that Python, Rust (pydantic-core) and JavaScript read the same way.
"""

from __future__ import annotations

from typing import Final

ENVELOPE_VERSION: Final = 1
TYPE_PREFIX: Final = "lineup.v1."
SURFACE_NAMESPACE: Final = "lineup.surface.v1"

# U1, and (host decision H1) every other id on the wire: message ids, conversation ids,
# sender ids, call ids.
ID_PATTERN: Final = r"^[A-Za-z0-9._:-]{1,128}$"
# U9
EVENT_NAME_PATTERN: Final = r"^[A-Za-z][A-Za-z0-9._:-]{0,63}$"
# U2: reverse-domain, lower case, at least two labels (host decision H1 on the exact form).
APP_ID_PATTERN: Final = r"^[a-z][a-z0-9-]{0,62}(\.[a-z0-9][a-z0-9-]{0,62})+$"
APP_ID_MAX_LENGTH: Final = 255
# U2: Semantic Versioning 2.0.0, the pattern semver.org recommends.
SEMVER_PATTERN: Final = (
    r"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)"
    r"(-((0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*)(\.(0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(\+([0-9a-zA-Z-]+(\.[0-9a-zA-Z-]+)*))?$"
)
# C4, C7: the seed writes capability versions as "1.0" and component versions as "1".
SHORT_VERSION_PATTERN: Final = r"^(0|[1-9][0-9]*)(\.(0|[1-9][0-9]*)){0,2}$"
# C7, C9: dotted lower-case names, e.g. app.open_url, clipboard.write, weather.lookup.
CAPABILITY_NAME_PATTERN: Final = r"^[a-z][a-z0-9_-]{0,63}(\.[a-z][a-z0-9_-]{0,63})+$"
CAPABILITY_NAME_MAX_LENGTH: Final = 128
# S7 / host decision H4: sha256 digest of the bundle bytes, standard base64 with padding.
INTEGRITY_PATTERN: Final = r"^sha256-[A-Za-z0-9+/]{43}=$"
# app.signature (H37): an Ed25519 signature (64 bytes, standard base64) and its key's id.
SIGNATURE_KEY_ID_PATTERN: Final = r"^[A-Za-z0-9_-]{16}$"
SIGNATURE_VALUE_PATTERN: Final = r"^[A-Za-z0-9+/]{86}==$"
# C9: RFC 3339 date-time with a mandatory offset.
RFC3339_PATTERN: Final = (
    r"^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}"
    r"(\.[0-9]{1,9})?([Zz]|[+-][0-9]{2}:[0-9]{2})$"
)

# Sizes, in bytes of UTF-8 of the compact JSON serialisation (no spaces, non-ASCII unescaped),
# which is what JavaScript's JSON.stringify produces, so kernel and browser count alike.
MAX_EVENT_DATA_BYTES: Final = 16 * 1024  # U9: data must be *under* this
DEFAULT_MAX_BUNDLE_BYTES: Final = 160 * 1024  # U3: html + css + js
DEFAULT_MAX_STATE_BYTES: Final = 256 * 1024  # H7
DEFAULT_MAX_MESSAGE_BYTES: Final = 1024 * 1024  # H2
MAX_JSON_DEPTH: Final = 64  # H2: nesting of arrays and objects
# H2: integers a double holds exactly (I-JSON, RFC 7493 section 2.2). Past it a browser reads
# 9007199254740993 as ...992 while the kernel keeps ...993: both ends must agree on a value.
MAX_SAFE_INTEGER: Final = 2**53 - 1
MAX_REASON_LENGTH: Final = 1024  # C9, U10: characters

RISKS: Final = ("display_only", "user_confirmation", "system_permission", "restricted")  # C8
STATUSES: Final = ("completed", "rejected", "cancelled", "expired", "unsupported", "failed")  # C11

# M2 and the host's own additions (H3, H12): who may send what.
AGENT_TO_CLIENT: Final = (
    "ui.open",
    "ui.patch",
    "ui.close",
    "app.call",
    "component.show",
    "component.remove",
    "component.append",
)
CLIENT_TO_AGENT: Final = (
    "ui.event",
    "client.inventory",
    "app.list",
    "app.result",
    "error",
    "component.answer",
)
# M3: families whose unknown members are answered `unsupported`, never executed.
EXTENSIBLE_FAMILIES: Final = ("ui.", "app.", "component.")

# L2, H12: the standard component kinds, their versions (C4) and which are questions (H14)
# are declared once, with their models: protocol/_models.py COMPONENT_KINDS.
STATUS_STATES: Final = ("idle", "working", "done", "failed", "warning")
MAX_COMPONENT_TEXT: Final = 256 * 1024  # H12: characters of markdown or text
MAX_CHOICE_OPTIONS: Final = 100
MAX_LABEL_LENGTH: Final = 256
MAX_PROMPT_LENGTH: Final = 4096
MAX_INPUT_PATTERN_LENGTH: Final = 256
MAX_INPUT_VALUE_LENGTH: Final = 16 * 1024

# H15: what sanitized Markdown may contain, in the kernel (nh3) and again in the browser.
MARKDOWN_TAGS: Final = (
    "a", "blockquote", "br", "code", "em", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "img",
    "li", "ol", "p", "pre", "s", "strong", "table", "tbody", "td", "th", "thead", "tr", "ul",
)  # fmt: skip
MARKDOWN_ATTRIBUTES: Final = {
    "a": ("href", "title", "rel", "target"),
    "img": ("src", "alt", "title"),
    "ol": ("start",),
}
MARKDOWN_LINK_SCHEMES: Final = ("http", "https", "mailto")
MARKDOWN_LINK_REL: Final = "noopener noreferrer nofollow"
# Images in agent text load only from data: URLs of these types: a remote image would tell
# the agent's author when and where the text is read (a tracking pixel).
MARKDOWN_IMAGE_PATTERN: Final = r"^data:image/(png|gif|jpeg|webp);base64,[A-Za-z0-9+/=]*$"

# Error codes of the `lineup.v1.error` payload (H3). Stable: agents may branch on them.
ERROR_CODES: Final = {
    "invalid_json": "the bytes are not a single I-JSON value (H2)",
    "too_large": "a size limit was exceeded",
    "invalid": "a field is missing, has the wrong type, or does not match its rule",
    "unknown_type": "the type is not a lineup.v1 message type",
    "unsupported": "a ui.* or app.* type, app, surface or capability this host does not have",
    "wrong_direction": "a client-to-agent message was sent to the client, or the reverse",
    "wrong_conversation": "the envelope belongs to another conversation",
    "unknown_instance": "no open surface instance has that id",
    "not_owner": "the instance was opened by another agent",
    "duplicate_id": "a message with this id was already received from this sender",
    "integrity_mismatch": "the bundle does not hash to its declared integrity",
    "untrusted_bundle": "strict mode: the bundle is neither allowlisted nor signed by a trusted "
    "key, or its signature does not verify",
    "call_conflict": "a call_id was reused with a different request",
    "rate_limited": "a surface sent events faster than the host takes them; the excess is dropped",
    "unresponsive": "a surface stopped answering the host, and the user stopped it",
    "focus_stolen": "a surface took the keyboard focus without the user's click or Tab, and the "
    "host stopped it",
    "csp_violation": "the browser blocked something a surface tried (its CSP, S3)",
    "unknown_component": "no standard component with that id is shown",
    "component_conflict": "the component id is taken by another kind, or the question was asked",
    "too_many": "a count limit was reached: open surfaces, components, waiting calls (H44)",
    "agent_conflict": "the agent id belongs to another endpoint: an in-kernel agent, or another "
    "connection (H41)",
    "reserved_id": "the agent id is the host's: mcp and mcp.* (its MCP servers) or its own "
    "client id (H28)",
    "internal": "the host failed while handling a valid message",
}

# Every rule, one sentence each, quoted in error messages. Spec rules restate
# docs/rules.md; H-rules are this host's decisions (docs/protocol.md).
RULES: Final = {
    "S2": "A surface runs only in a sandboxed iframe with allow-scripts and nothing more.",
    "S3": "A surface's CSP forbids network, remote scripts and nested frames: at least "
    "default-src 'none'; connect-src 'none'; img-src data: blob:; style-src 'unsafe-inline'; "
    "script-src 'unsafe-inline'.",
    "S4": "The host checks the source, namespace, instance, event name, JSON type and size of "
    "every message from a surface.",
    "S7": "A bundle that declares app.integrity must hash to exactly that value.",
    "M1": "Every message is a lineup.v1 envelope: v, id, type, conversation_id, sender, payload.",
    "M2": "The type is one of the lineup.v1 message types and travels in its own direction: "
    "ui.open, ui.patch, ui.close and app.call go from agent to client; ui.event, "
    "client.inventory, app.list and app.result from client to agent (this host adds "
    "component.show, component.remove and component.append to the client, component.answer "
    "to the agent: H12, H45).",
    "M3": "An unknown ui.* or app.* type is answered 'unsupported' and never executed.",
    "U1": "instance_id matches [A-Za-z0-9._:-]{1,128} and is unique in its conversation; "
    "ui.open with an existing id replaces that instance.",
    "U2": "app.id is a stable reverse-domain id (like com.example.weather) and app.version "
    "is SemVer (like 1.0.0).",
    "U3": "html, css and js form the bundle, at most 160 KiB together by default; "
    "resources are local, never public URLs.",
    "U4": "state is a JSON object; the surface receives it when ready and on every ui.patch.",
    "U5": "ui.patch carries state only, never html, css or js.",
    "U7": 'A surface sends only {"namespace": "lineup.surface.v1", "type": "event", '
    '"event": NAME, "data": OBJECT}.',
    "U8": "The host turns a surface event into lineup.v1.ui.event {instance_id, event, data}.",
    "U9": "An event name matches [A-Za-z][A-Za-z0-9._:-]{0,63} and its data is a JSON "
    "object under 16 KiB.",
    "U10": "ui.close carries instance_id and reason; a user's close reaches the agent as "
    "ui.event 'close'.",
    "C3": "A reference to an app, surface or capability the client does not have gets a "
    "deterministic 'unsupported' or 'revoked' answer, never a fallback.",
    "C4": "client.inventory carries revision, standard_components [{id, version}], "
    "applications [{id, version, surfaces [{id, events}]}] and capabilities "
    "[{name, version, risk}].",
    "C5": "applications lists only apps enabled in the app center and verified locally, never "
    "bundle source, install source, file paths or user content.",
    "C6": "An installed app's surface is opened by app id alone, and sends only the events "
    "its manifest declares, with data matching the event's schema when it declares one.",
    "C7": "app.list entries carry name, version, risk and input_schema.",
    "C8": "risk is one of display_only, user_confirmation, system_permission, restricted.",
    "C9": "app.call carries call_id, capability, reason, expires_at (an RFC 3339 time) "
    "and arguments (a JSON object).",
    "C10": "The client answers an app.call with app.result carrying the same call_id.",
    "C11": "app.result status is one of completed, rejected, cancelled, expired, "
    "unsupported, failed.",
    "C12": "The same call_id is idempotent: it gets the same result, and is never executed twice.",
    # The capability broker's rules (docs/capabilities.md; host decisions H20-H25).
    "C13": "Calls and authorization decisions are audited.",
    "H20": "A call whose expires_at has passed is answered 'expired' and never run: on arrival "
    "without a prompt, and while it waits, by a timer in the kernel.",
    "H21": "app.open_url, clipboard.write and device.pick_file run in the browser inside the "
    "user's Allow click, and the kernel checks what the browser reports; like the "
    "system_permission and restricted tiers they are never pre-allowed or remembered.",
    "H22": "A call_id repeated while its call waits is answered with that call's result when "
    "it ends, once per app.call received; the user is asked once.",
    "H23": "A restricted capability is allowed only after the user types its name in the prompt.",
    "H24": "A handler that raises fails the call; the agent reads only the exception's type, "
    "unless the handler raised CapabilityError with a message written for it.",
    "H25": "artifact.save writes a new file under the artifacts folder: a relative path of "
    "plain names, no '..', no symlinks followed, never over an existing file.",
    "H27": "A call_id, a remembered decision, an MCP domain grant and a cached app resource "
    "belong to the identity the host assigned to the connection that made them (an "
    "in-kernel agent, one connection, one MCP server session), never to a name the requester "
    "chose: another identity using the same call_id, agent id or server name gets none of it.",
    "H28": "Agent ids mcp and mcp.* and the host's own client id are the host's: no agent may "
    "claim them, in the kernel or outside it.",
    "H1": "Envelope fields are exactly v (1), id, type, conversation_id, sender {kind, id}, "
    "payload, and optionally target {kind, id} and ts (RFC 3339); unknown fields are refused.",
    "H2": "A message is UTF-8 I-JSON (RFC 7493): no duplicate keys, no NaN or Infinity, no "
    "integer beyond +/-(2^53-1) (send it as a string), no lone surrogates, at most 64 levels "
    "deep and 1 MiB long.",
    "H3": "The client answers every refused message with one lineup.v1.error "
    "{code, rule, path, message, refused_id, refused_type}, or an app.call with app.result.",
    "H4": "app.integrity is sha256-BASE64 of the bundle bytes defined in docs/protocol.md.",
    "H5": "ui.open names an installed app's surface with app {id, surface, version?} and no "
    "html, css or js.",
    "H6": "ui.patch replaces the state of an open instance, or merges into it with "
    '"merge": true (RFC 7396); the host numbers each state with a revision.',
    "H7": "A surface's state is at most 256 KiB by default.",
    "H8": "Only the agent that opened an instance may patch, close or replace it.",
    "H9": "A message id is not reused by its sender; a repeat is refused, not applied twice.",
    "H12": "A standard component is shown by lineup.v1.component.show {component_id, kind, "
    "...} and removed by component.remove {component_id}; kind is one of markdown, text, "
    "status, progress, error, choice, confirm, input.",
    "H13": "component.show with a shown component_id updates that component in place; only "
    "the agent that showed it may, only with the same kind, and a question (choice, confirm, "
    "input) is never asked twice under one id.",
    "H14": "A question gets exactly one component.answer: 'answered' with a value that meets "
    "its constraints, or 'cancelled'.",
    "H15": "Markdown is rendered by the host (CommonMark, no raw HTML, tables, strikethrough) "
    "and sanitized to an allowlist: links only http, https or mailto, images only data: URLs.",
    "H45": "component.append {component_id, text} adds text to the end of a shown markdown "
    "or text component; only the agent that showed it may, and the whole stays within the "
    "component's limit.",
    "H37": "In strict mode an inline bundle opens only if its H4 digest is on the host's "
    "allowlist or app.signature {key_id, value} is an Ed25519 signature by a trusted key over "
    "'lineup-bundle-signature-v1\\n' + digest; a signature by a trusted key that does not "
    "verify is refused in every mode.",
}
