"""A `virtual_size` asking for no layout and no repaint: for widgets whose virtual size follows a layout.

Textual sets each widget's virtual size at the end of a layout, and its default reactive then asks
for a second layout and a repaint of the whole widget. For a transcript entry (its virtual size is
its size) and for the transcript view (its children were just laid out; its scrollbars update on
their own) that second pass changes nothing, yet it cost every append a second layout and paint.
"""

from __future__ import annotations

from textual.geometry import Size
from textual.reactive import Reactive


def virtual_size_from_layout() -> Reactive[Size]:
    return Reactive(Size(0, 0), layout=False, repaint=False)
