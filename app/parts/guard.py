"""Widget values from the wire, checked before Streamlit reads them: a value of the wrong type is ignored.

A browser sends each widget's value in the field its kind uses (a selectbox a string, a slider a list
of floats, a number box a number). A hand-made websocket message can put any field in: an integer
for a selectbox came back from Streamlit's own reader as that integer (not one of the options), and
a string for a slider made the reader raise a TypeError, shown as an exception box before the page
even ran (Streamlit reads the values to call the widgets' callbacks first).

``install`` wraps ``SessionState.set_widgets_from_proto`` (where a run's incoming values are stored)
so that a value is dropped, and the widget keeps the value it had, when for a widget the server has
already drawn (its metadata known):

- its field is not the widget's own (``metadata.value_type``; a number box of whole numbers sends
  ``int_value`` for its ``double_value``),
- the widget's reader (``metadata.deserializer``) raises on it, or
- it names no option of a selectbox, radio or segmented control (the app offers no free entry).

Widgets the server has not drawn yet have no reader: Streamlit itself ignores their values. Files and
chat messages are only checked by field (reading them consumes them).
"""
from __future__ import annotations

from streamlit.runtime.state import common, session_state

_NOT_READ = {"file_uploader_state_value", "chat_input_value", "string_trigger_value"}
_NUMBERS = {"int_value", "double_value"}  # a number box whose values are ints sends int_value (its field: double)
MARK = "_specsim_guarded"


def acceptable(state, metadata) -> bool:
    """May the incoming ``state`` (a ``WidgetState`` proto) be the value of the widget ``metadata``
    describes?"""
    field = state.WhichOneof("value")
    if field is None:  # a cleared value (a number box emptied): the widget's own None
        return True
    if metadata.value_type is not None and field != metadata.value_type and {field, metadata.value_type} != _NUMBERS:
        return False
    if field in _NOT_READ:
        return True
    try:
        raw = common.unpack_widget_state_value(state)
        metadata.deserializer(raw)
    except Exception:  # noqa: BLE001  any reader's failure: the value is not this widget's
        return False
    serde = getattr(metadata.deserializer, "__self__", None)
    names = getattr(serde, "formatted_option_to_option_index", None)
    if isinstance(names, dict) and names:
        picked = raw if isinstance(raw, (list, tuple)) else [raw]
        return all(isinstance(v, str) and v in names for v in picked)
    return True


def install() -> bool:
    """Wrap Streamlit's store of incoming widget values (once per process); False where this Streamlit has
    no such method (the check is then Streamlit's own)."""
    cls = session_state.SessionState
    original = getattr(cls, "set_widgets_from_proto", None)
    if original is None:  # pragma: no cover - another Streamlit
        return False
    if getattr(original, MARK, False):
        return True

    def set_widgets_from_proto(self, widget_states):
        known = self._new_widget_state.widget_metadata
        good = [s for s in widget_states.widgets if s.id not in known or acceptable(s, known[s.id])]
        if len(good) < len(widget_states.widgets):
            widget_states = type(widget_states)()
            widget_states.widgets.extend(good)
        return original(self, widget_states)

    setattr(set_widgets_from_proto, MARK, True)
    cls.set_widgets_from_proto = set_widgets_from_proto
    return True
