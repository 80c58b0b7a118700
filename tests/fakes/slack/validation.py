"""Content limits: message text length, Block Kit shape and sizes, modal views."""

from __future__ import annotations

from typing import Any

from .limits import SlackLimits
from .wire import ApiError

_HEADER_TEXT = 150
_FIELD_TEXT = 2000
_MAX_FIELDS = 10
_VIEW_TITLE = 24
_MAX_CONTEXT_ACTIONS = 5


def check_message(args: dict[str, Any], limits: SlackLimits) -> None:
    """What chat.postMessage / update / postEphemeral refuse."""
    text = args.get("text")
    if text is not None and not isinstance(text, str):
        raise ApiError("invalid_arguments")
    if text is not None and len(text) > limits.max_text:
        raise ApiError("msg_too_long")
    if args.get("blocks") is not None:
        check_blocks(args["blocks"], limits.max_blocks, limits)


def check_blocks(blocks: Any, max_blocks: int, limits: SlackLimits) -> None:
    if not isinstance(blocks, list) or not all(isinstance(b, dict) for b in blocks):
        _invalid("must be an array of objects", "")
    if len(blocks) > max_blocks:
        _invalid(f"must contain at most {max_blocks} items", "")
    block_ids = [b["block_id"] for b in blocks if "block_id" in b]
    if len(block_ids) != len(set(block_ids)):
        _invalid("block_id must be unique", "")
    for index, block in enumerate(blocks):
        _check_block(block, f"/{index}", limits)
    markdown = sum(len(str(b.get("text", ""))) for b in blocks if b.get("type") == "markdown")
    if markdown > limits.max_markdown:
        _invalid(f"markdown blocks must hold at most {limits.max_markdown} characters", "")


def check_view(view: Any, limits: SlackLimits) -> None:
    """What views.open / update / push refuse."""
    if not isinstance(view, dict) or view.get("type") not in ("modal", "home"):
        raise ApiError("invalid_arguments", response_metadata={"messages": ["invalid view type"]})
    title = (view.get("title") or {}).get("text", "")
    if view["type"] == "modal" and not 0 < len(title) <= _VIEW_TITLE:
        raise ApiError("invalid_arguments", response_metadata={
            "messages": [f"title must be 1-{_VIEW_TITLE} characters [json-pointer:/view/title]"]})
    check_blocks(view.get("blocks", []), limits.max_view_blocks, limits)


def _check_block(block: dict[str, Any], pointer: str, limits: SlackLimits) -> None:
    kind = block.get("type")
    if not isinstance(kind, str):
        _invalid("missing required field: type", pointer)
    if kind == "section":
        text = (block.get("text") or {}).get("text", "")
        if len(text) > limits.max_section_text:
            _invalid(f"must be less than {limits.max_section_text + 1} characters",
                     f"{pointer}/text/text")
        fields = block.get("fields") or []
        if not text and not fields:
            _invalid("must provide text or fields", pointer)
        if len(fields) > _MAX_FIELDS or any(len(f.get("text", "")) > _FIELD_TEXT for f in fields):
            _invalid("too many fields or a field too long", f"{pointer}/fields")
    if kind == "markdown" and not (isinstance(block.get("text"), str) and block["text"]):
        _invalid("must provide text", f"{pointer}/text")
    if kind == "context_actions":
        _check_context_actions(block, pointer)
    if kind == "header" and len((block.get("text") or {}).get("text", "")) > _HEADER_TEXT:
        _invalid(f"must be less than {_HEADER_TEXT + 1} characters", f"{pointer}/text/text")


def _check_context_actions(block: dict[str, Any], pointer: str) -> None:
    elements = block.get("elements")
    if not isinstance(elements, list) or not 0 < len(elements) <= _MAX_CONTEXT_ACTIONS:
        _invalid(f"must hold 1-{_MAX_CONTEXT_ACTIONS} elements", f"{pointer}/elements")
    for index, element in enumerate(elements):
        at = f"{pointer}/elements/{index}"
        if element.get("type") not in ("feedback_buttons", "icon_button"):
            _invalid("must be feedback_buttons or icon_button", at)
        if element.get("type") == "feedback_buttons" and not all(
                isinstance(element.get(k), dict) and element[k].get("value")
                and (element[k].get("text") or {}).get("text")
                for k in ("positive_button", "negative_button")):
            _invalid("feedback_buttons needs positive_button and negative_button", at)


def _invalid(reason: str, pointer: str) -> None:
    message = f"{reason} [json-pointer:/blocks{pointer}]"
    raise ApiError("invalid_blocks", errors=[message], response_metadata={"messages": [message]})
