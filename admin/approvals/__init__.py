"""`/api/chat/approvals` and `/api/chat/approval-rules`: tool approvals waiting for a decision,
and the remembered decisions."""
