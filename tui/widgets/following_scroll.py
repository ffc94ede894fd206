"""A scrolling view that follows its end as entries are appended, at one layout and one render per append.

Its virtual size follows the layout (no second layout pass), and its scrollbar shows only while the
person reads above the end: following it, the bar would only say "at the bottom", yet repainting it
took a render pass of its own on every append. The bar's column stays reserved, so nothing re-wraps.
"""

from __future__ import annotations

from textual.containers import VerticalScroll

from keel.tui.widgets.layout_sized import virtual_size_from_layout


class FollowingScroll(VerticalScroll):
    virtual_size = virtual_size_from_layout()

    def on_mount(self) -> None:
        self.anchor()

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        self.set_class(not self.is_vertical_scroll_end, "-reading")
