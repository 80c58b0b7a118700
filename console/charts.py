"""Bar charts drawn by the server as SVG (no chart library, nothing fetched): a pure function
from labelled amounts to the bars' geometry, which templates/chart.html draws."""

from __future__ import annotations

from dataclasses import dataclass

WIDTH = 640
ROW = 22  # the height of a horizontal bar's row
LABEL = 170  # room for the labels left of horizontal bars
COLUMN_HEIGHT = 160  # the plot's height under vertical bars (by day)


@dataclass(frozen=True, slots=True)
class Bar:
    label: str
    amount: float
    said: str  # the amount as the chart writes it
    x: float
    y: float
    width: float
    height: float


@dataclass(frozen=True, slots=True)
class Chart:
    title: str
    bars: tuple[Bar, ...]
    width: int
    height: int
    horizontal: bool

    @property
    def summary(self) -> str:
        """What the chart shows, in words (its accessible name's detail)."""
        top = ", ".join(f"{b.label}: {b.said}" for b in self.bars[:5])
        return f"{self.title}: {top}" if top else f"{self.title}: nothing recorded"


def amount_text(amount: float) -> str:
    """12,345 or 1.2M: short enough to sit at the end of a bar."""
    for size, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if amount >= max(size, 1e4):  # up to 9,999 as it is
            return f"{amount / size:.1f}{unit}"
    return f"{amount:,.0f}"


def bars_across(title: str, amounts: list[tuple[str, float]]) -> Chart:
    """One horizontal bar per label, the longest for the largest amount, in the given order."""
    most = max((a for _, a in amounts), default=0.0) or 1.0
    room = WIDTH - LABEL - 70
    bars = tuple(Bar(label, amount, amount_text(amount), LABEL, i * ROW + 4,
                     max(1.0, room * amount / most) if amount else 0.0, ROW - 8)
                 for i, (label, amount) in enumerate(amounts))
    return Chart(title, bars, WIDTH, max(ROW, len(bars) * ROW + 4), True)


def bars_up(title: str, amounts: list[tuple[str, float]]) -> Chart:
    """One vertical bar per label (a day), left to right, the tallest for the largest amount."""
    most = max((a for _, a in amounts), default=0.0) or 1.0
    step = (WIDTH - 20) / max(1, len(amounts))
    bars = []
    for i, (label, amount) in enumerate(amounts):
        height = COLUMN_HEIGHT * amount / most
        bars.append(Bar(label, amount, amount_text(amount), 10 + i * step + step * 0.1,
                        COLUMN_HEIGHT - height + 4, step * 0.8, height))
    return Chart(title, tuple(bars), WIDTH, COLUMN_HEIGHT + 24, False)
