"""The host's views and what they alone ask of it. ``Host.widget`` and ``Host.inspector`` are
made here on first use; the host's widget is handed this port (as sessions are handed
``_SessionPort``) for the calls only it makes, which are therefore not the Host's public API:
the browser's refusals of a surface's messages, and the connections' changes for its agents
line. A notebook has ``host.surface_message``, ``host.watch_surfaces`` and the others
(docs/agents.md, "Being told of a change")."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..core._views import views
from ..protocol._errors import ProtocolError
from ._connections import Connections
from ._user_acts import UserActs

if TYPE_CHECKING:
    from ..appcenter._trust import BundleTrust
    from ..capabilities._consent import ConsentViews

__all__ = ["ViewPort"]


class ViewPort:
    """The host's widgets, made on first use, and the host widget's own calls on the host."""

    def __init__(
        self,
        host: object,  # the Host, handed to its views as it is (never imported: no cycle)
        trust: BundleTrust,
        user: UserActs,
        connections: Connections,
        consent: ConsentViews,
        config: dict[str, Any],
    ) -> None:
        self._host = host
        self._trust = trust
        self._user = user
        self._connections = connections
        self._consent = consent
        self._config = config  # the host view's sizes and event rates
        self._widget: Any = None
        self._inspector: Any = None

    def widget(self) -> Any:
        if self._widget is None:
            trust = self._trust.summary()
            self._widget = views().host(
                self._host, self, self._consent, trust=trust, **self._config
            )
        return self._widget

    def inspector(self) -> Any:
        if self._inspector is None:
            self._inspector = views().inspector(self._host)
        return self._inspector

    def report_refused(self, instance_id: str, report: dict[str, Any]) -> ProtocolError:
        """What the browser refused from a surface (S4, U7, U9, a flood): recorded and told
        to the instance's agent, so whoever writes the surface can see why nothing happened."""
        return self._user.report_refused(instance_id, report)

    def watch_connections(self, watcher: Callable[[], None]) -> Callable[[], None]:
        """Call ``watcher()`` when an agent outside the kernel connects, is named, or ends."""
        return self._connections.watch(watcher)
