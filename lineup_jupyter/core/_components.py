"""The standard components an agent has shown (L2, H12-H15), in the order they were shown.

Like ``_surfaces``: every method checks everything before it changes anything, so a refusal
leaves the components exactly as they were; watchers hear each change afterwards. The host
holds the lock. Markdown is rendered here, once, when it is shown (H15), so every view of
the notebook inserts the same sanitized HTML.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, NamedTuple, Union, cast

from ..protocol import rules
from ..protocol._errors import ProtocolError
from ..protocol._models import (
    COMPONENT_VERSIONS,
    QUESTION_KINDS,
    ChoiceComponent,
    ComponentAnswerPayload,
    ComponentAppendPayload,
    ComponentSpec,
    ConfirmComponent,
    InputComponent,
    MarkdownComponent,
    TextComponent,
)
from ..protocol._patterns import compile_pattern
from ..runtime._watchers import Watchers
from ._markdown_stream import MarkdownStream

__all__ = ["Component", "ComponentChange", "Components", "ComponentsView"]


class Component:
    """One shown component: what the agent sent, who sent it, and the user's answer."""

    __slots__ = ("answer", "owner", "renderer", "seq", "spec")

    def __init__(
        self, owner: str, spec: ComponentSpec, seq: int, renderer: MarkdownStream | None = None
    ) -> None:
        self.owner = owner
        self.spec = spec
        self.seq = seq  # the order the components were first shown in; an update keeps it
        if isinstance(spec, MarkdownComponent):
            # An update that extends the text (a streamed answer) renders only its end.
            if renderer is not None and renderer.extends(spec.markdown):
                renderer.extend(spec.markdown)
            else:
                renderer = MarkdownStream(spec.markdown)
        else:
            renderer = None
        self.renderer = renderer
        self.answer: ComponentAnswerPayload | None = None

    @property
    def html(self) -> str | None:
        """The sanitized HTML of a markdown component (H15); None for other kinds."""
        return None if self.renderer is None else self.renderer.html

    @property
    def component_id(self) -> str:
        return self.spec.component_id

    @property
    def is_question(self) -> bool:
        return self.spec.kind in QUESTION_KINDS

    @property
    def pending(self) -> bool:
        """A question still waiting for the user (H14)."""
        return self.is_question and self.answer is None

    def to_view(self) -> dict[str, Any]:
        """What a view draws: the spec, the sanitized HTML, the answer once there is one."""
        view = self.spec.model_dump(mode="json", exclude_none=True)
        view.pop("markdown", None)  # the view gets only the sanitized HTML (S6)
        view["owner"] = self.owner  # which agent said it, shown with it
        if self.renderer is not None:
            view["html"] = self.renderer.html
        if self.answer is not None:
            view["answer"] = self.answer.model_dump(mode="json", exclude_none=True)
        return view

    def __repr__(self) -> str:
        return f"Component({self.component_id!r}, kind={self.spec.kind!r}, owner={self.owner!r})"


class ComponentChange(NamedTuple):
    kind: str  # "show", "update", "answer", "remove"
    component: Component


class Components:
    """Shown components by id, oldest first."""

    def __init__(self) -> None:
        self._shown: dict[str, Component] = {}
        self._next_seq = 0
        self._watchers: Watchers[[ComponentChange]] = Watchers("component")

    def __iter__(self) -> Iterator[str]:
        return iter(self._shown)

    def __len__(self) -> int:
        return len(self._shown)

    def get(self, component_id: str) -> Component | None:
        return self._shown.get(component_id)

    def values(self) -> list[Component]:
        return list(self._shown.values())

    def watch(self, watcher: Callable[[ComponentChange], None]) -> Callable[[], None]:
        return self._watchers.add(watcher)

    def view(self) -> ComponentsView:
        """This registry as its users see it: read, never changed (``host.components``)."""
        return ComponentsView(self)

    # ---- what the agent does ---------------------------------------------------------

    def show(self, owner: str, spec: ComponentSpec) -> Component:
        """Show a new component, or update a shown one in place (H13)."""
        version = COMPONENT_VERSIONS[spec.kind]
        if spec.version is not None and spec.version != version:
            raise ProtocolError(
                "unsupported",
                "C4",
                "$.payload.version",
                f"this host draws {spec.kind} version {version}, not {spec.version}; "
                "client.inventory lists the standard components and their versions.",
            )
        shown = self._shown.get(spec.component_id)
        if shown is None:
            component = Component(owner, spec, self._next_seq)
            self._next_seq += 1
            self._shown[spec.component_id] = component
            self._watchers.notify(ComponentChange("show", component))
            return component
        _check_owner(shown, owner)
        if shown.spec.kind != spec.kind or shown.is_question:
            was = "a question" if shown.is_question else f"a {shown.spec.kind}"
            raise ProtocolError(
                "component_conflict",
                "H13",
                "$.payload.component_id",
                f"component {spec.component_id!r} is already {was}; show a new component "
                "under a new component_id. " + rules.RULES["H13"],
            )
        updated = Component(owner, spec, shown.seq, shown.renderer)
        self._shown[spec.component_id] = updated
        self._watchers.notify(ComponentChange("update", updated))
        return updated

    def append(self, owner: str, payload: ComponentAppendPayload) -> Component:
        """Add text to the end of a shown markdown or text component (H45): a streamed
        answer, whose Markdown is rendered again only from its last open block."""
        shown = self.existing(payload.component_id)
        _check_owner(shown, owner)
        spec = shown.spec
        grown: ComponentSpec
        if isinstance(spec, MarkdownComponent):
            length = len(spec.markdown) + len(payload.text)
            grown = spec.model_copy(update={"markdown": spec.markdown + payload.text})
        elif isinstance(spec, TextComponent):
            length = len(spec.text) + len(payload.text)
            grown = spec.model_copy(update={"text": spec.text + payload.text})
        else:
            raise ProtocolError(
                "component_conflict",
                "H45",
                "$.payload.component_id",
                f"component {payload.component_id!r} is a {spec.kind}; only markdown and text "
                "components grow. " + rules.RULES["H45"],
            )
        if length > rules.MAX_COMPONENT_TEXT:
            raise ProtocolError(
                "too_large",
                "H45",
                "$.payload.text",
                f"the {spec.kind} would be {length} characters; the limit is "
                f"{rules.MAX_COMPONENT_TEXT}. " + rules.RULES["H45"],
            )
        updated = Component(owner, grown, shown.seq, shown.renderer)
        self._shown[payload.component_id] = updated
        self._watchers.notify(ComponentChange("update", updated))
        return updated

    def remove(self, owner: str | None, component_id: str) -> Component:
        """Remove a component (``owner`` None: the host itself, for any agent)."""
        shown = self.existing(component_id)
        if owner is not None:
            _check_owner(shown, owner)
        del self._shown[component_id]
        self._watchers.notify(ComponentChange("remove", shown))
        return shown

    # ---- what the user does ----------------------------------------------------------

    def answer(self, answer: ComponentAnswerPayload) -> Component:
        """Record the user's one answer to a question (H14), after checking it against it."""
        component = self.existing(answer.component_id)
        if not component.is_question:
            raise ProtocolError(
                "invalid",
                "H14",
                "$.payload.component_id",
                f"component {answer.component_id!r} is a {component.spec.kind}, not a question.",
            )
        if component.answer is not None:
            raise ProtocolError(
                "component_conflict",
                "H14",
                "$.payload.component_id",
                f"question {answer.component_id!r} was already {component.answer.status}. "
                + rules.RULES["H14"],
            )
        if answer.kind != component.spec.kind:
            raise ProtocolError(
                "invalid",
                "H14",
                "$.payload.kind",
                f"question {answer.component_id!r} is a {component.spec.kind}, "
                f"not a {answer.kind}.",
            )
        if answer.status == "answered":
            problem = _problem_with(cast(Question, component.spec), answer.value)
            if problem is not None:
                raise ProtocolError(
                    "invalid", "H14", "$.payload.value", f"{problem}. " + rules.RULES["H14"]
                )
        component.answer = answer
        self._watchers.notify(ComponentChange("answer", component))
        return component

    def existing(self, component_id: str) -> Component:
        shown = self._shown.get(component_id)
        if shown is None:
            raise ProtocolError(
                "unknown_component",
                "H12",
                "$.payload.component_id",
                f"no component {component_id!r} is shown.",
            )
        return shown


def _check_owner(component: Component, owner: str) -> None:
    if component.owner != owner:
        raise ProtocolError(
            "not_owner",
            "H13",
            "$.payload.component_id",
            f"component {component.component_id!r} was shown by agent {component.owner!r}, "
            f"not {owner!r}. " + rules.RULES["H13"],
        )


Question = Union[ChoiceComponent, ConfirmComponent, InputComponent]  # what answer() checked


def _problem_with(spec: Question, value: Any) -> str | None:
    """Why ``value`` does not answer the question ``spec`` (None: it does). The kernel decides;
    the browser's own checks only spare the user a round trip."""
    check = ANSWER_CHECKS.get(spec.kind)
    if check is None:  # a question kind declared without its check: refuse, never accept
        return f"this host cannot check an answer to a {spec.kind}"
    return check(spec, value)


def _choice_problem(spec: ChoiceComponent, value: Any) -> str | None:
    if not isinstance(value, list):
        return "a choice is answered with a list of option ids"
    known = {option.id for option in spec.options}
    unknown = [item for item in value if item not in known]
    if unknown:
        return f"{unknown[0]!r} is not one of the options"
    if len(set(value)) != len(value):
        return "an option is selected twice"
    low, high = spec.selection_range()
    if not low <= len(value) <= high:
        wanted = str(low) if low == high else f"between {low} and {high}"
        return f"{len(value)} options are selected; the question wants {wanted}"
    return None


def _confirm_problem(spec: ConfirmComponent, value: Any) -> str | None:
    return None if isinstance(value, bool) else "a confirm is answered with true or false"


def _input_problem(spec: InputComponent, value: Any) -> str | None:
    if spec.input_type == "number":
        # bool is an int in Python, not a number a user typed
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return "a number input is answered with a number"
        if spec.min is not None and value < spec.min:
            return f"{value:g} is below the minimum {spec.min:g}"
        if spec.max is not None and value > spec.max:
            return f"{value:g} is above the maximum {spec.max:g}"
        return None
    if not isinstance(value, str):
        return "a text input is answered with a string"
    if value == "":  # HTML forms check length and pattern only on a value that is there
        return "the answer is required" if spec.required else None
    length = len(value.encode("utf-16-le")) // 2  # what the browser counts (UTF-16 units)
    if spec.min_length is not None and length < spec.min_length:
        return f"the answer is {length} characters; at least {spec.min_length} are required"
    if spec.max_length is not None and length > spec.max_length:
        return f"the answer is {length} characters; at most {spec.max_length} are allowed"
    # compile_pattern accepted it when it was shown (the model's check), and RE2 matches in
    # time linear in the answer: no answer can hold the kernel (H14).
    if spec.pattern is not None and not compile_pattern(spec.pattern).fullmatch(value):
        return f"the answer does not match the pattern {spec.pattern!r}"
    return None


# Each question kind's answer check (H14), by kind: a kind declared a question in
# protocol/_models.py COMPONENT_KINDS has one here (tests/core/test_component_kinds.py).
ANSWER_CHECKS: dict[str, Callable[[Any, Any], str | None]] = {
    "choice": _choice_problem,
    "confirm": _confirm_problem,
    "input": _input_problem,
}


class ComponentsView:
    """The shown components, read-only: what ``host.components`` is. A change goes through
    the host, which takes its lock, records it in the history and tells the agents; a
    mutator here would skip all three, so there is none."""

    __slots__ = ("_registry",)

    def __init__(self, registry: Components) -> None:
        self._registry = registry

    def __iter__(self) -> Iterator[str]:
        return iter(self._registry)

    def __len__(self) -> int:
        return len(self._registry)

    def __contains__(self, component_id: object) -> bool:
        return isinstance(component_id, str) and self._registry.get(component_id) is not None

    def get(self, component_id: str) -> Component | None:
        return self._registry.get(component_id)

    def values(self) -> list[Component]:
        return self._registry.values()

    def __repr__(self) -> str:
        return f"ComponentsView({list(self._registry)})"
