"""The documented Discord limits the fake enforces; every number can be changed per test."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    """Length/count limits (400, code 50035) and rate limits (429) of the fake.

    Rate limits are fixed windows per bucket and major parameter, measured on the fake's
    clock: channel message writes (POST + PATCH of messages, per channel) and webhook
    writes (follow-ups and edits of interaction responses, per interaction token).
    `retry_after`, when set, is what a 429 reports instead of the real time left in the
    window (handy with a ManualClock). With `rate_limit_headers=False` successful answers
    carry no X-RateLimit-* headers, so discord.py cannot throttle pre-emptively and any
    over-limit burst shows up as a 429 in the fake's log.
    """

    content: int = 2000
    embeds: int = 10
    embed_title: int = 256
    embed_description: int = 4096
    embed_fields: int = 25
    embed_field_name: int = 256
    embed_field_value: int = 1024
    embed_footer: int = 2048
    embed_author: int = 256
    embed_total: int = 6000
    action_rows: int = 5
    row_width: int = 5
    components_v2_total: int = 40
    button_label: int = 80
    custom_id: int = 100
    select_options: int = 25
    select_placeholder: int = 150
    select_option_text: int = 100
    modal_title: int = 45
    modal_components: int = 5
    modal_label: int = 45
    text_input_value: int = 4000
    autocomplete_choices: int = 25
    thread_name: int = 100
    files: int = 10
    file_size: int = 10 * 1024 * 1024
    commands: int = 100
    command_options: int = 25
    message_writes: int = 5
    message_window: float = 5.0
    webhook_writes: int = 5
    webhook_window: float = 2.0
    retry_after: float | None = None
    rate_limit_headers: bool = True
    interaction_ack_deadline: float = 3.0
    interaction_token_ttl: float = 15 * 60.0
