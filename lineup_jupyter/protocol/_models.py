"""pydantic models of the lineup.v1 envelope and every payload: the single source of truth.

Each constrained field names the rule it enforces in ``x-rule`` (kept in the JSON Schema too);
``_validate`` quotes that rule when a field is wrong. Models are frozen and refuse unknown
fields (host decision H1), so a typo such as ``instanceId`` is an error, not a silent no-op.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Annotated, Any, Final, Literal, Union, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    Tag,
    ValidationInfo,
    field_validator,
    model_validator,
)

from . import _rules as r
from ._json import size
from ._patterns import PatternError, compile_pattern

__all__ = [
    "COMPONENT_KINDS",
    "COMPONENT_RENDERERS",
    "COMPONENT_VERSIONS",
    "QUESTION_KINDS",
    "AppCall",
    "AppCallPayload",
    "AppList",
    "AppListEntry",
    "AppListPayload",
    "AppRef",
    "AppResult",
    "AppResultPayload",
    "BundleSignature",
    "CapabilityEntry",
    "ChoiceComponent",
    "ChoiceOption",
    "ClientInventory",
    "ComponentAnswer",
    "ComponentAnswerPayload",
    "ComponentAppend",
    "ComponentAppendPayload",
    "ComponentKind",
    "ComponentRemove",
    "ComponentRemovePayload",
    "ComponentShow",
    "ComponentSpec",
    "ConfirmComponent",
    "Envelope",
    "EnvelopeHeader",
    "ErrorComponent",
    "ErrorEnvelope",
    "ErrorPayload",
    "InlineApp",
    "InputComponent",
    "InventoryApp",
    "InventoryPayload",
    "InventorySurface",
    "MarkdownComponent",
    "Party",
    "ProgressComponent",
    "ResultError",
    "StandardComponent",
    "StatusComponent",
    "TextComponent",
    "UiClose",
    "UiClosePayload",
    "UiEvent",
    "UiEventPayload",
    "UiOpen",
    "UiOpenPayload",
    "UiPatch",
    "UiPatchPayload",
    "parse_rfc3339",
]


def _rule(rule: str, **kwargs: Any) -> Any:
    return Field(json_schema_extra={"x-rule": rule}, **kwargs)


Id = Annotated[str, Field(pattern=r.ID_PATTERN)]
EventName = Annotated[str, Field(pattern=r.EVENT_NAME_PATTERN)]
AppId = Annotated[str, Field(pattern=r.APP_ID_PATTERN, max_length=r.APP_ID_MAX_LENGTH)]
SemVer = Annotated[str, Field(pattern=r.SEMVER_PATTERN, max_length=256)]
ShortVersion = Annotated[str, Field(pattern=r.SHORT_VERSION_PATTERN, max_length=64)]
CapabilityName = Annotated[
    str, Field(pattern=r.CAPABILITY_NAME_PATTERN, max_length=r.CAPABILITY_NAME_MAX_LENGTH)
]
Reason = Annotated[str, Field(min_length=1, max_length=r.MAX_REASON_LENGTH)]
Risk = Literal["display_only", "user_confirmation", "system_permission", "restricted"]
Status = Literal["completed", "rejected", "cancelled", "expired", "unsupported", "failed"]
JsonObject = dict[str, Any]


def parse_rfc3339(text: str) -> datetime:
    """An RFC 3339 time (already matching RFC3339_PATTERN) as an aware datetime."""
    normal = text.upper().replace("Z", "+00:00")
    date, _, rest = normal.partition("T")
    clock, offset = rest[:-6], rest[-6:]
    if "." in clock:  # fromisoformat on 3.10 takes 3 or 6 fraction digits only
        whole, fraction = clock.split(".")
        clock = f"{whole}.{(fraction + '000000')[:6]}"
    return datetime.fromisoformat(f"{date}T{clock}{offset}")


def _check_rfc3339(value: str) -> str:
    try:
        parse_rfc3339(value)
    except ValueError:
        raise ValueError(f"{value!r} is not a real date and time") from None
    return value


class WireModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, regex_engine="rust-regex")


class Party(WireModel):
    """Who sent a message, or whom it is for (M1, H1)."""

    kind: Literal["agent", "client"] = _rule("H1")
    id: Id = _rule("M1")


class _EnvelopeFields(WireModel):
    """The fields every envelope has besides ``type`` and ``payload`` (M1, H1)."""

    v: Literal[1] = _rule("M1")
    id: Id = _rule("M1")
    conversation_id: Id = _rule("M1")
    sender: Party = _rule("M1")
    target: Party | None = _rule("H1", default=None)
    ts: Annotated[str, Field(pattern=r.RFC3339_PATTERN)] | None = _rule("H1", default=None)

    @field_validator("ts")
    @classmethod
    def _real_time(cls, value: str | None) -> str | None:
        return None if value is None else _check_rfc3339(value)


class EnvelopeHeader(_EnvelopeFields):
    """The envelope around every message (M1, H1), with its payload still unread."""

    type: str = _rule("M2")
    payload: JsonObject = _rule("M1")


# ---- ui.open / ui.patch / ui.close (agent -> client) -------------------------------------


class BundleSignature(WireModel):
    """An Ed25519 signature over a bundle's digest, for hosts in strict mode (H37)."""

    key_id: Annotated[str, Field(pattern=r.SIGNATURE_KEY_ID_PATTERN)] = _rule("H37")
    value: Annotated[str, Field(pattern=r.SIGNATURE_VALUE_PATTERN)] = _rule("H37")


class InlineApp(WireModel):
    """A surface bundle carried in the message (U2, U3, S7)."""

    id: AppId = _rule("U2")
    name: Annotated[str, Field(min_length=1, max_length=256)] | None = _rule("U2", default=None)
    version: SemVer = _rule("U2")
    integrity: Annotated[str, Field(pattern=r.INTEGRITY_PATTERN)] | None = _rule("H4", default=None)
    signature: BundleSignature | None = _rule("H37", default=None)
    html: str = _rule("U3")
    css: str = _rule("U3", default="")
    js: str = _rule("U3", default="")

    @model_validator(mode="after")
    def _bundle_within_limit(self, info: ValidationInfo) -> InlineApp:
        limit = _limit(info, "max_bundle_bytes", r.DEFAULT_MAX_BUNDLE_BYTES)
        total = sum(
            len(part.encode("utf-8", "surrogatepass")) for part in (self.html, self.css, self.js)
        )
        if total > limit:
            raise ValueError(
                f"U3 the bundle (html + css + js) is {total} bytes; the limit is {limit}"
            )
        return self


class AppRef(WireModel):
    """A surface of an installed app, named without a bundle (H5, C6)."""

    id: AppId = _rule("U2")
    surface: Id = _rule("H5")
    version: SemVer | None = _rule("U2", default=None)


def _app_kind(value: Any) -> str:
    if isinstance(value, dict):
        return "ref" if "surface" in value else "inline"
    return "ref" if isinstance(value, AppRef) else "inline"


AppSpec = Annotated[
    Union[Annotated[InlineApp, Tag("inline")], Annotated[AppRef, Tag("ref")]],
    Discriminator(_app_kind),
]


def _limit(info: ValidationInfo, name: str, default: int) -> int:
    context = info.context
    if isinstance(context, dict):
        value = context.get(name, default)
        if isinstance(value, int):
            return value
    return default


def _state_within_limit(value: JsonObject, info: ValidationInfo) -> JsonObject:
    limit = _limit(info, "max_state_bytes", r.DEFAULT_MAX_STATE_BYTES)
    # Only a long message can hold a long state; the caller passes its length.
    if _limit(info, "message_bytes", limit + 1) > limit and (n := size(value)) > limit:
        raise ValueError(f"H7 the state is {n} bytes; the limit is {limit}")
    return value


class UiOpenPayload(WireModel):
    instance_id: Id = _rule("U1")
    app: AppSpec = _rule("U3")
    state: JsonObject = _rule("U4", default_factory=dict)

    @field_validator("app", mode="before")
    @classmethod
    def _bundle_or_reference(cls, value: Any) -> Any:
        if isinstance(value, dict) and "surface" in value and value.keys() & {"html", "css", "js"}:
            raise ValueError(
                "H5 app names an installed surface and also carries a bundle; send one or the other"
            )
        return value

    _state_size = field_validator("state")(_state_within_limit)


class UiPatchPayload(WireModel):
    instance_id: Id = _rule("U1")
    state: JsonObject = _rule("U4")
    merge: bool = _rule("H6", default=False)

    _state_size = field_validator("state")(_state_within_limit)


class UiClosePayload(WireModel):
    instance_id: Id = _rule("U1")
    reason: Reason = _rule("U10")


# ---- ui.event (client -> agent) ----------------------------------------------------------


class UiEventPayload(WireModel):
    instance_id: Id = _rule("U8")
    event: EventName = _rule("U9")
    data: JsonObject = _rule("U9")

    @field_validator("data")
    @classmethod
    def _data_under_16k(cls, value: JsonObject) -> JsonObject:
        n = size(value)
        if n >= r.MAX_EVENT_DATA_BYTES:
            raise ValueError(
                f"U9 the event data is {n} bytes; it must be under {r.MAX_EVENT_DATA_BYTES}"
            )
        return value


# ---- inventory and capabilities ----------------------------------------------------------


class StandardComponent(WireModel):
    id: Id = _rule("C4")
    version: ShortVersion = _rule("C4")


class InventorySurface(WireModel):
    id: Id = _rule("C4")
    events: list[EventName] = _rule("C4")


class InventoryApp(WireModel):
    id: AppId = _rule("U2")
    version: SemVer = _rule("U2")
    surfaces: list[InventorySurface] = _rule("C4")


class CapabilityEntry(WireModel):
    name: CapabilityName = _rule("C4")
    version: ShortVersion | SemVer = _rule("C4")
    risk: Risk = _rule("C8")


class InventoryPayload(WireModel):
    revision: Id = _rule("C4")
    standard_components: list[StandardComponent] = _rule("C4")
    applications: list[InventoryApp] = _rule("C4")
    capabilities: list[CapabilityEntry] = _rule("C4")


class AppListEntry(WireModel):
    name: CapabilityName = _rule("C7")
    version: ShortVersion | SemVer = _rule("C7")
    risk: Risk = _rule("C8")
    input_schema: JsonObject = _rule("C7")


class AppListPayload(WireModel):
    capabilities: list[AppListEntry] = _rule("C7")


class AppCallPayload(WireModel):
    call_id: Id = _rule("C9")
    capability: CapabilityName = _rule("C9")
    reason: Reason = _rule("C9")
    expires_at: Annotated[str, Field(pattern=r.RFC3339_PATTERN)] = _rule("C9")
    arguments: JsonObject = _rule("C9")

    @field_validator("expires_at")
    @classmethod
    def _real_time(cls, value: str) -> str:
        return _check_rfc3339(value)

    def expires(self) -> datetime:
        return parse_rfc3339(self.expires_at)

    def expired(self, now: datetime | None = None) -> bool:
        return self.expires() <= (now or datetime.now(timezone.utc))


class ResultError(WireModel):
    """Why a call did not complete: the same fields as a refusal (H3)."""

    code: str = _rule("H3", min_length=1, max_length=64)
    message: str = _rule("H3", max_length=4096)
    rule: str | None = _rule("H3", default=None, max_length=16)
    path: str | None = _rule("H3", default=None, max_length=1024)


class AppResultPayload(WireModel):
    call_id: Id = _rule("C10")
    status: Status = _rule("C11")
    result: JsonObject | None = _rule("C10", default=None)
    error: ResultError | None = _rule("H3", default=None)


class ErrorPayload(WireModel):
    code: Literal[tuple(r.ERROR_CODES)] = _rule("H3")  # type: ignore[valid-type]
    rule: Annotated[str, Field(pattern=r"^[A-Z][0-9]{1,2}$")] = _rule("H3")
    path: Annotated[str, Field(min_length=1, max_length=1024)] = _rule("H3")
    message: Annotated[str, Field(min_length=1, max_length=4096)] = _rule("H3")
    refused_id: Id | None = _rule("H3", default=None)
    refused_type: Annotated[str, Field(max_length=128)] | None = _rule("H3", default=None)


# ---- standard components (host decisions H12-H15) -----------------------------------------

Prompt = Annotated[str, Field(min_length=1, max_length=r.MAX_PROMPT_LENGTH)]
Label = Annotated[str, Field(min_length=1, max_length=r.MAX_LABEL_LENGTH)]
Count = Annotated[int, Field(ge=0, le=r.MAX_INPUT_VALUE_LENGTH)]
# Strict: a user's 3 stays 3 (not 3.0), and true or "5" is not a number.
Number = Annotated[Union[StrictInt, StrictFloat], Field(allow_inf_nan=False)]


class _Component(WireModel):
    component_id: Id = _rule("H12")
    version: ShortVersion | None = _rule("C4", default=None)
    if TYPE_CHECKING:  # each kind's model fixes it to its Literal; pydantic sees only those
        kind: str


class MarkdownComponent(_Component):
    kind: Literal["markdown"] = _rule("H12")
    markdown: Annotated[str, Field(max_length=r.MAX_COMPONENT_TEXT)] = _rule("H15")


class TextComponent(_Component):
    kind: Literal["text"] = _rule("H12")
    text: Annotated[str, Field(max_length=r.MAX_COMPONENT_TEXT)] = _rule("H12")


class StatusComponent(_Component):
    kind: Literal["status"] = _rule("H12")
    state: Literal[r.STATUS_STATES] = _rule("H12")  # type: ignore[valid-type]
    label: Label = _rule("H12")


class ProgressComponent(_Component):
    """Determinate when ``value`` is given (0 <= value <= total), indeterminate without."""

    kind: Literal["progress"] = _rule("H12")
    label: Label | None = _rule("H12", default=None)
    value: Annotated[Number, Field(ge=0)] | None = _rule("H12", default=None)
    total: Annotated[Number, Field(gt=0)] = _rule("H12", default=1.0)

    @model_validator(mode="after")
    def _value_within_total(self) -> ProgressComponent:
        if self.value is not None and self.value > self.total:
            raise ValueError(f"H12 value: {self.value:g} is more than total {self.total:g}")
        return self


class ErrorComponent(_Component):
    kind: Literal["error"] = _rule("H12")
    code: Annotated[str, Field(min_length=1, max_length=64)] = _rule("H12")
    message: Prompt = _rule("H12")


class ChoiceOption(WireModel):
    id: Id = _rule("H12")
    label: Label = _rule("H12")


class ChoiceComponent(_Component):
    """One option (``multiple`` false), or between min_selected and max_selected of them."""

    kind: Literal["choice"] = _rule("H12")
    prompt: Prompt = _rule("H12")
    options: Annotated[list[ChoiceOption], Field(min_length=1, max_length=r.MAX_CHOICE_OPTIONS)] = (
        _rule("H12")
    )
    multiple: StrictBool = _rule("H12", default=False)
    min_selected: Count | None = _rule("H14", default=None)
    max_selected: Count | None = _rule("H14", default=None)
    submit_label: Label = _rule("H12", default="Submit")
    cancel_label: Label = _rule("H12", default="Cancel")

    @model_validator(mode="after")
    def _consistent(self) -> ChoiceComponent:
        ids = [option.id for option in self.options]
        if len(set(ids)) != len(ids):
            raise ValueError("H12 options: the option ids must be unique")
        if not self.multiple and (self.min_selected, self.max_selected) != (None, None):
            raise ValueError(
                "H12 multiple: min_selected and max_selected apply only when multiple is true"
            )
        low, high = self.selection_range()
        if low > high or low > len(ids):
            raise ValueError(
                f"H12 min_selected: no answer can select between {low} and {high} options"
            )
        return self

    def selection_range(self) -> tuple[int, int]:
        if not self.multiple:
            return 1, 1
        low = 0 if self.min_selected is None else self.min_selected
        high = len(self.options) if self.max_selected is None else self.max_selected
        return low, high


class ConfirmComponent(_Component):
    kind: Literal["confirm"] = _rule("H12")
    prompt: Prompt = _rule("H12")
    confirm_label: Label = _rule("H12", default="Confirm")
    cancel_label: Label = _rule("H12", default="Cancel")


class InputComponent(_Component):
    """A text or number field with the constraints HTML forms know, checked again on answer."""

    kind: Literal["input"] = _rule("H12")
    prompt: Prompt = _rule("H12")
    input_type: Literal["text", "number"] = _rule("H12", default="text")
    placeholder: Label | None = _rule("H12", default=None)
    default: Annotated[str, Field(max_length=r.MAX_INPUT_VALUE_LENGTH)] | Number | None = _rule(
        "H12", default=None
    )
    required: StrictBool = _rule("H14", default=False)
    min_length: Count | None = _rule("H14", default=None)
    max_length: Count | None = _rule("H14", default=None)
    pattern: Annotated[str, Field(min_length=1, max_length=r.MAX_INPUT_PATTERN_LENGTH)] | None = (
        _rule("H14", default=None)
    )
    min: Number | None = _rule("H14", default=None)
    max: Number | None = _rule("H14", default=None)
    submit_label: Label = _rule("H12", default="Submit")
    cancel_label: Label = _rule("H12", default="Cancel")

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                compile_pattern(value)
            except PatternError as exc:
                raise ValueError(f"H14 pattern is refused: {exc}") from None
        return value

    @model_validator(mode="after")
    def _consistent(self) -> InputComponent:
        text_only = {"min_length": self.min_length, "max_length": self.max_length}
        number_only = {"min": self.min, "max": self.max}
        wrong: dict[str, object] = {**text_only, "pattern": self.pattern}
        if self.input_type == "text":
            wrong = {**number_only}
        for name, value in wrong.items():
            if value is not None:
                raise ValueError(f"H12 {name}: does not apply to a {self.input_type} input")
        if self.default is not None:
            wanted = str if self.input_type == "text" else (int, float)
            if not isinstance(self.default, wanted):
                raise ValueError(
                    f"H12 default: a {self.input_type} input's default is a {self.input_type}"
                )
        bounds = {"min_length": (self.min_length, self.max_length), "min": (self.min, self.max)}
        for name, (low, high) in bounds.items():
            if low is not None and high is not None and low > high:
                raise ValueError(f"H12 {name}: the lower bound {low} is above the upper one {high}")
        return self


@dataclass(frozen=True)
class ComponentKind:
    """One standard component kind, declared once (L2, H12, C4): its model (whose ``kind``
    literal names it), the version this host draws, whether it is a question the user answers
    exactly once (H14), and the name its renderers are registered under, in
    ``widgets/_static.py`` (the saved notebook's view) and ``js/components.js`` (the browser's):
    kinds drawn alike share one. Everything else that lists the kinds derives from
    COMPONENT_KINDS: the union below, the inventory (C4), the generated JS constants, the
    static view's and the browser's dispatch, and the tests."""

    model: type[_Component]
    version: str = "1"
    question: bool = False
    renderer: str = field(default="")

    @property
    def kind(self) -> str:
        literal: str = get_args(self.model.model_fields["kind"].annotation)[0]
        return literal

    def __post_init__(self) -> None:
        field = self.model.model_fields.get("kind")
        names = get_args(field.annotation) if field is not None else ()
        if len(names) != 1 or not isinstance(names[0], str):
            raise TypeError(f"{self.model.__name__} must name its kind: kind: Literal['name']")
        if not self.renderer:
            object.__setattr__(self, "renderer", self.kind)


COMPONENT_KINDS: Final = (
    ComponentKind(MarkdownComponent),
    ComponentKind(TextComponent),
    ComponentKind(StatusComponent),
    ComponentKind(ProgressComponent),
    ComponentKind(ErrorComponent),
    ComponentKind(ChoiceComponent, question=True, renderer="question"),
    ComponentKind(ConfirmComponent, question=True, renderer="question"),
    ComponentKind(InputComponent, question=True, renderer="question"),
)
# Derived from COMPONENT_KINDS, never written again elsewhere (js/protocol.generated.js too).
COMPONENT_VERSIONS: Final = {kind.kind: kind.version for kind in COMPONENT_KINDS}
QUESTION_KINDS: Final = tuple(kind.kind for kind in COMPONENT_KINDS if kind.question)
COMPONENT_RENDERERS: Final = {kind.kind: kind.renderer for kind in COMPONENT_KINDS}


def _component_kind(value: Any) -> str | None:
    kind = value.get("kind") if isinstance(value, dict) else getattr(value, "kind", None)
    # isinstance first: an unhashable kind (a list, an object) must be refused, not raise
    return kind if isinstance(kind, str) and kind in COMPONENT_VERSIONS else None


if TYPE_CHECKING:  # one of COMPONENT_KINDS' models; isinstance narrows it to one
    ComponentSpec = _Component
else:
    ComponentSpec = Annotated[
        Union[tuple(Annotated[kind.model, Tag(kind.kind)] for kind in COMPONENT_KINDS)],
        Discriminator(
            _component_kind,
            custom_error_type="component_kind",
            custom_error_message="H12 kind must be one of " + ", ".join(COMPONENT_VERSIONS),
        ),
    ]


class ComponentRemovePayload(WireModel):
    component_id: Id = _rule("H12")


class ComponentAppendPayload(WireModel):
    """More text for a shown markdown or text component (a streamed answer, H45)."""

    component_id: Id = _rule("H45")
    text: Annotated[str, Field(min_length=1, max_length=r.MAX_COMPONENT_TEXT)] = _rule("H45")


AnswerValue = Union[
    Annotated[list[Id], Field(max_length=r.MAX_CHOICE_OPTIONS)],
    StrictBool,
    Annotated[str, Field(max_length=r.MAX_INPUT_VALUE_LENGTH)],
    Number,
]


class ComponentAnswerPayload(WireModel):
    """The user's answer to a question: choice -> option ids, confirm -> bool, input -> value."""

    component_id: Id = _rule("H14")
    kind: Literal[QUESTION_KINDS] = _rule("H14")  # type: ignore[valid-type]
    status: Literal["answered", "cancelled"] = _rule("H14")
    value: AnswerValue | None = _rule("H14", default=None)

    @model_validator(mode="after")
    def _value_when_answered(self) -> ComponentAnswerPayload:
        if (self.status == "answered") != (self.value is not None):
            raise ValueError(
                "H14 value: an answered question carries a value; a cancelled one does not"
            )
        return self


# ---- envelopes: one class per type, one discriminated union ------------------------------


class _Envelope(_EnvelopeFields):
    """Base of the typed envelopes; each subclass fixes ``type`` and ``payload``."""

    type: str
    payload: BaseModel

    def to_wire(self) -> dict[str, Any]:
        """The envelope as a JSON-ready dict, without absent optional fields."""
        return self.model_dump(mode="json", exclude_none=True)


class UiOpen(_Envelope):
    type: Literal["lineup.v1.ui.open"] = _rule("M2")
    payload: UiOpenPayload = _rule("M1")


class UiPatch(_Envelope):
    type: Literal["lineup.v1.ui.patch"] = _rule("M2")
    payload: UiPatchPayload = _rule("M1")


class UiClose(_Envelope):
    type: Literal["lineup.v1.ui.close"] = _rule("M2")
    payload: UiClosePayload = _rule("M1")


class UiEvent(_Envelope):
    type: Literal["lineup.v1.ui.event"] = _rule("M2")
    payload: UiEventPayload = _rule("M1")


class ClientInventory(_Envelope):
    type: Literal["lineup.v1.client.inventory"] = _rule("M2")
    payload: InventoryPayload = _rule("M1")


class AppList(_Envelope):
    type: Literal["lineup.v1.app.list"] = _rule("M2")
    payload: AppListPayload = _rule("M1")


class AppCall(_Envelope):
    type: Literal["lineup.v1.app.call"] = _rule("M2")
    payload: AppCallPayload = _rule("M1")


class AppResult(_Envelope):
    type: Literal["lineup.v1.app.result"] = _rule("M2")
    payload: AppResultPayload = _rule("M1")


class ErrorEnvelope(_Envelope):
    type: Literal["lineup.v1.error"] = _rule("M2")
    payload: ErrorPayload = _rule("M1")


class ComponentShow(_Envelope):
    type: Literal["lineup.v1.component.show"] = _rule("M2")
    payload: ComponentSpec = _rule("H12")


class ComponentRemove(_Envelope):
    type: Literal["lineup.v1.component.remove"] = _rule("M2")
    payload: ComponentRemovePayload = _rule("H12")


class ComponentAppend(_Envelope):
    type: Literal["lineup.v1.component.append"] = _rule("M2")
    payload: ComponentAppendPayload = _rule("H45")


class ComponentAnswer(_Envelope):
    type: Literal["lineup.v1.component.answer"] = _rule("M2")
    payload: ComponentAnswerPayload = _rule("H14")


Envelope = Annotated[
    Union[
        Annotated[UiOpen, Tag("lineup.v1.ui.open")],
        Annotated[UiPatch, Tag("lineup.v1.ui.patch")],
        Annotated[UiClose, Tag("lineup.v1.ui.close")],
        Annotated[UiEvent, Tag("lineup.v1.ui.event")],
        Annotated[ClientInventory, Tag("lineup.v1.client.inventory")],
        Annotated[AppList, Tag("lineup.v1.app.list")],
        Annotated[AppCall, Tag("lineup.v1.app.call")],
        Annotated[AppResult, Tag("lineup.v1.app.result")],
        Annotated[ErrorEnvelope, Tag("lineup.v1.error")],
        Annotated[ComponentShow, Tag("lineup.v1.component.show")],
        Annotated[ComponentRemove, Tag("lineup.v1.component.remove")],
        Annotated[ComponentAppend, Tag("lineup.v1.component.append")],
        Annotated[ComponentAnswer, Tag("lineup.v1.component.answer")],
    ],
    Discriminator(lambda value: _envelope_type(value)),
]
"""Any lineup.v1 message this host knows, discriminated on ``type``."""

ENVELOPE_CLASSES: dict[str, type[_Envelope]] = {
    get_args(cls.model_fields["type"].annotation)[0]: cls
    for cls in (
        UiOpen,
        UiPatch,
        UiClose,
        UiEvent,
        ClientInventory,
        AppList,
        AppCall,
        AppResult,
        ErrorEnvelope,
        ComponentShow,
        ComponentRemove,
        ComponentAppend,
        ComponentAnswer,
    )
}


def _envelope_type(value: Any) -> str | None:
    kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    return kind if kind in ENVELOPE_CLASSES else None
