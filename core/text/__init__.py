"""Text before it is stored or shown: what any store takes (NUL, surrogates), Markdown's
blocks and where a long answer is cut, and the checks of a named input field. Pure
functions; no database, no I/O."""
