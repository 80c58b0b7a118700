"""Pure rendering: run state, answers, questions, pages and refusals to embeds and button
specs, a run's reaction mark, a thread's name. No I/O here: bots/discord/delivery/ writes what
these return."""
