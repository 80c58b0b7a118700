"""What an operator reads of the conversations (the admin API's listing, detail, message pages
and versions, attachment downloads and exports; the console's pages): the chat layer's read
models, given here so that every front end reads them through the conversation layer."""

from __future__ import annotations

from core.chat.attachment_store import download
from core.chat.export import Export, export_filename, prepare_export
from core.chat.message_views import (
    MessagePage,
    MessageView,
    SessionDetail,
    message_page,
    message_views,
    session_detail,
)
from core.chat.session_queries import (
    SessionSummary,
    SummaryPage,
    list_summaries,
    preview,
    session_summary,
    summarize,
)
from core.chat.tree import versions

__all__ = [
    "Export", "MessagePage", "MessageView", "SessionDetail", "SessionSummary", "SummaryPage",
    "download", "export_filename", "list_summaries", "message_page", "message_views",
    "prepare_export", "preview",
    "session_detail", "session_summary", "summarize", "versions",
]
