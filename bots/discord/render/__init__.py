"""Pure rendering: run state, answers, questions and pages to embeds and button specs."""
