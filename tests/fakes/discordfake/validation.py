"""Checks of request bodies against Limits, answered with Discord's 50035 field errors."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from .limits import Limits
from .responses import FieldErrors

COMPONENTS_V2 = 1 << 15
_COMMAND_NAME = re.compile(r"^[-_\w]{1,32}$")


def too_long(limit: int) -> tuple[str, str]:
    return ("BASE_TYPE_MAX_LENGTH", f"Must be {limit} or fewer in length.")


def bad_length(limit: int) -> tuple[str, str]:
    return ("BASE_TYPE_BAD_LENGTH", f"Must be between 1 and {limit} in length.")


def _check_len(errors: FieldErrors, path: str, value: Any, limit: int) -> None:
    if isinstance(value, str | list) and len(value) > limit:
        errors[path] = too_long(limit)


def check_message(body: dict[str, Any], limits: Limits) -> FieldErrors:
    """Content, embed and component limits of a message create/edit/interaction reply."""
    errors: FieldErrors = {}
    _check_len(errors, "content", body.get("content") or "", limits.content)
    errors.update(_check_embeds(body.get("embeds") or [], limits))
    components = body.get("components") or []
    if int(body.get("flags") or 0) & COMPONENTS_V2:
        errors.update(_check_v2(body, components, limits))
    else:
        errors.update(_check_rows(components, limits))
    errors.update(_check_items(components, limits))
    return errors


def _check_embeds(embeds: list[dict[str, Any]], limits: Limits) -> FieldErrors:
    errors: FieldErrors = {}
    _check_len(errors, "embeds", embeds, limits.embeds)
    total = 0
    for i, embed in enumerate(embeds):
        at = f"embeds.{i}"
        texts = {
            "title": (embed.get("title") or "", limits.embed_title),
            "description": (embed.get("description") or "", limits.embed_description),
            "footer.text": ((embed.get("footer") or {}).get("text") or "", limits.embed_footer),
            "author.name": ((embed.get("author") or {}).get("name") or "", limits.embed_author),
        }
        for name, (text, limit) in texts.items():
            _check_len(errors, f"{at}.{name}", text, limit)
            total += len(text)
        fields = embed.get("fields") or []
        _check_len(errors, f"{at}.fields", fields, limits.embed_fields)
        for j, field in enumerate(fields):
            name, value = field.get("name") or "", field.get("value") or ""
            _check_len(errors, f"{at}.fields.{j}.name", name, limits.embed_field_name)
            _check_len(errors, f"{at}.fields.{j}.value", value, limits.embed_field_value)
            total += len(field.get("name") or "") + len(field.get("value") or "")
    if total > limits.embed_total:
        message = f"Embed size exceeds maximum size of {limits.embed_total}"
        errors["embeds"] = ("MAX_EMBED_SIZE_EXCEEDED", message)
    return errors


def _check_rows(components: list[dict[str, Any]], limits: Limits) -> FieldErrors:
    errors: FieldErrors = {}
    _check_len(errors, "components", components, limits.action_rows)
    for i, row in enumerate(components):
        if row.get("type") != 1:
            message = 'Value of field "type" must be one of (1,).'
            errors[f"components.{i}.type"] = ("UNION_TYPE_CHOICES", message)
            continue
        children = row.get("components") or []
        width = sum(limits.row_width if c.get("type") in (3, 5, 6, 7, 8) else 1 for c in children)
        if not children or width > limits.row_width:
            errors[f"components.{i}.components"] = bad_length(limits.row_width)
    return errors


def _check_v2(
    body: dict[str, Any], components: list[dict[str, Any]], limits: Limits
) -> FieldErrors:
    errors: FieldErrors = {}
    for field in ("content", "embeds"):
        if body.get(field):
            message = f"The '{field}' field cannot be used when using MessageFlags.IS_COMPONENTS_V2"
            errors[field] = ("MESSAGE_CANNOT_USE_LEGACY_FIELDS_WITH_COMPONENTS_V2", message)
    if sum(1 for _ in _walk(components, "components")) > limits.components_v2_total:
        errors["components"] = too_long(limits.components_v2_total)
    return errors


def _walk(components: list[dict[str, Any]], path: str) -> Iterator[tuple[str, dict[str, Any]]]:
    for i, component in enumerate(components):
        here = f"{path}.{i}"
        yield here, component
        yield from _walk(component.get("components") or [], f"{here}.components")
        for key in ("accessory", "component"):
            if isinstance(component.get(key), dict):
                yield from _walk([component[key]], f"{here}.{key}")


def _check_items(components: list[dict[str, Any]], limits: Limits) -> FieldErrors:
    errors: FieldErrors = {}
    seen: set[str] = set()
    for path, item in _walk(components, "components"):
        custom_id = item.get("custom_id")
        if custom_id is not None:
            _check_len(errors, f"{path}.custom_id", custom_id, limits.custom_id)
            if custom_id in seen:
                message = "Component custom id cannot be duplicated"
                errors[f"{path}.custom_id"] = ("COMPONENT_CUSTOM_ID_DUPLICATED", message)
            seen.add(custom_id)
        if item.get("type") == 2:
            _check_len(errors, f"{path}.label", item.get("label") or "", limits.button_label)
            if custom_id is None and item.get("style") not in (5, 6):
                errors[f"{path}.custom_id"] = ("BASE_TYPE_REQUIRED", "This field is required")
        if item.get("type") == 3:
            options = item.get("options") or []
            placeholder = item.get("placeholder") or ""
            _check_len(errors, f"{path}.options", options, limits.select_options)
            _check_len(errors, f"{path}.placeholder", placeholder, limits.select_placeholder)
            for j, option in enumerate(options):
                for key in ("label", "value", "description"):
                    text = option.get(key) or ""
                    _check_len(errors, f"{path}.options.{j}.{key}", text, limits.select_option_text)
    return errors


def check_modal(data: dict[str, Any], limits: Limits) -> FieldErrors:
    """Title, size and text-input limits of a modal (interaction callback type 9)."""
    errors: FieldErrors = {}
    title = data.get("title") or ""
    if not title:
        errors["data.title"] = ("BASE_TYPE_REQUIRED", "This field is required")
    _check_len(errors, "data.title", title, limits.modal_title)
    _check_len(errors, "data.custom_id", data.get("custom_id") or "", limits.custom_id)
    components = data.get("components") or []
    if not components or len(components) > limits.modal_components:
        errors["data.components"] = bad_length(limits.modal_components)
    for path, item in _walk(components, "data.components"):
        if item.get("type") in (4, 18):
            _check_len(errors, f"{path}.label", item.get("label") or "", limits.modal_label)
        if item.get("type") == 4:
            _check_len(errors, f"{path}.custom_id", item.get("custom_id") or "", limits.custom_id)
            _check_len(errors, f"{path}.value", item.get("value") or "", limits.text_input_value)
    return errors


def check_choices(data: dict[str, Any], limits: Limits) -> FieldErrors:
    """Autocomplete result limits (callback type 8)."""
    errors: FieldErrors = {}
    choices = data.get("choices") or []
    _check_len(errors, "data.choices", choices, limits.autocomplete_choices)
    for i, choice in enumerate(choices):
        _check_len(errors, f"data.choices.{i}.name", choice.get("name") or "", 100)
    return errors


def check_commands(commands: list[dict[str, Any]], limits: Limits) -> FieldErrors:
    """Bulk-overwrite limits of application commands."""
    errors: FieldErrors = {}
    for i, command in enumerate(commands):
        name = command.get("name") or ""
        if not _COMMAND_NAME.match(name) or (command.get("type", 1) == 1 and name != name.lower()):
            errors[f"{i}.name"] = ("APPLICATION_COMMAND_INVALID_NAME", "Command name is invalid")
        if command.get("type", 1) == 1:
            _check_len(errors, f"{i}.description", command.get("description") or "", 100)
        _check_len(errors, f"{i}.options", command.get("options") or [], limits.command_options)
    return errors
