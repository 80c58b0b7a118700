"""What the terminal shows of a run as it goes: status lines, tools, todos, the answer once."""

from __future__ import annotations

from typing import TextIO

from core.conversation import presenting
from core.runtime.updates import RunUpdate

# hermes-agent relays each reply of the model as progress of this pseudo-tool; the last one is
# the answer itself, which `hermes>` prints.
MODEL_TEXT = "_thinking"


class TerminalView:
    """Prints what changed between two updates of a run, never the same line twice, and not
    the model's last words as a status before they are printed as the answer."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.status = ""
        self.held: str | None = None  # the model's words, printed once the run goes on
        self.tools = 0
        self.todos: tuple = ()

    def show(self, update: RunUpdate) -> None:
        state = update.state
        line = presenting.status_line(update)
        if line != self.status and not update.finished:
            self._release()
            if _shows_model_text(update, line):
                self.held = f"  · {line}"
            else:
                self._print(f"  · {line}")
            self.status = line
        for tool in state.tools[self.tools:]:
            self._print(f"  🔧 {tool.name} {tool.args_preview[:60]}")
        self.tools = len(state.tools)
        if state.todos != self.todos:
            self.todos = state.todos
            for todo_line in presenting.todo_lines(state.todos):
                self._print(f"    {todo_line}")

    def finish(self, update: RunUpdate) -> None:
        if update.state.final_text is not None:
            self._print(f"\nhermes> {update.state.final_text}\n")
        else:
            self._release()  # it was no answer: what the model said last is worth seeing
        self._print(f"  ({presenting.closing_line(update)})")

    def _release(self) -> None:
        if self.held is not None:
            self._print(self.held)
            self.held = None

    def _print(self, text: str) -> None:
        print(text, file=self.out, flush=True)


def _shows_model_text(update: RunUpdate, line: str) -> bool:
    status = update.state.status
    return status is not None and status.tool_name == MODEL_TEXT and line.endswith(status.text)
