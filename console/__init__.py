"""The operator's console (`/console`): the seeds' chat page in the browser, server-rendered,
signed in with ADMIN_TOKEN, entering core through the conversation layer (docs/console.md)."""
