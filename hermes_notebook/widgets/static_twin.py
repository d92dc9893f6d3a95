"""A live widget shown together with a static twin: what a saved notebook keeps for viewers without widget JS.

``_ipython_display_`` shows the widget *and* a second output (the widget's :meth:`StaticTwin.static_bundle`:
text/plain and escaped text/html in an element whose output the live view hides: js/src/twin.ts) under a
``display_id``; :meth:`StaticTwin.update_static` re-renders that output in place. nbviewer, GitHub and
nbconvert, which run no widget JS, show the twin. Updating the widget's own output instead would re-create
the live view and lose what the user was typing. Used by ``Chat`` (a transcript) and ``Jobs`` (a table).
"""

from __future__ import annotations

import logging
import uuid
from typing import Any

__all__ = ["StaticTwin"]

log = logging.getLogger(__name__)


class StaticTwin:
    """Mixin for an anywidget ``DOMWidget``: the live view plus a static twin output kept up to date.

    Subclasses implement :meth:`static_bundle` and set :attr:`live_text` (the widget's own text/plain).
    """

    #: The widget output's text/plain (shown where widgets cannot render).
    live_text = "live widget; a static copy follows"

    def _init_static_twin(self, prefix: str) -> None:
        self._static_id = f"{prefix}-{uuid.uuid4().hex}"
        self._static_shown = False

    def static_bundle(self) -> dict[str, str]:
        """The twin's mime bundle (escaped, inert HTML)."""
        raise NotImplementedError

    @property
    def static_shown(self) -> bool:
        """True once the twin was displayed (updates before that have nowhere to go)."""
        return getattr(self, "_static_shown", False)

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        bundle = super()._repr_mimebundle_(**kwargs)  # type: ignore[misc]
        data = bundle[0] if isinstance(bundle, tuple) else bundle
        if isinstance(data, dict) and "text/plain" in data:
            data["text/plain"] = self._live_text()
        return bundle

    def _live_text(self) -> str:
        return self.live_text

    def _ipython_display_(self) -> None:
        from IPython.display import display

        bundle = self._repr_mimebundle_()
        data, metadata = bundle if isinstance(bundle, tuple) else (bundle, {})
        display(data, metadata=metadata or None, raw=True)
        display(self.static_bundle(), raw=True, display_id=self._static_id)
        self._static_shown = True

    def update_static(self) -> None:
        """Re-render the twin in place (no-op before it was displayed or without a kernel)."""
        if not self.static_shown:
            return
        try:
            from IPython.display import update_display

            update_display(self.static_bundle(), raw=True, display_id=self._static_id)
        except Exception:  # no kernel / display machinery: nothing to update
            log.debug("could not update the static twin of %s", type(self).__name__, exc_info=True)
