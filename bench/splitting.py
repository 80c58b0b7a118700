"""Splitting long answers: time per answer at each platform's limit.

    .venv/bin/python -m bench.splitting [--sizes 20000,100000,1000000] [--rounds 5]

Builds answers of the given sizes from the blocks models write (prose, a long code block, a
numbered list, a quote, a table), splits each at Slack's section limit (2,900), a Discord
embed's (4,000) and a Slack markdown block's (12,000), and prints the median time of
`--rounds` splits with the number of parts.
"""

from __future__ import annotations

import argparse
import statistics
import time

from core.text.splitting import split_markdown

LIMITS = (2900, 4000, 12000)


def answer(size: int) -> str:
    """About `size` characters of Markdown, the same few blocks over and over."""
    prose = "This is a sentence of an answer with `code` and **bold** words. " * 12
    code = "```python\n" + "\n".join(f"value_{n} = compute({n})  # step" for n in range(120)) + "\n```"
    numbered = "\n".join(f"{n}. item {n} with some words in it" for n in range(1, 30))
    quote = "\n".join(f"> quoted line {n} of the reply" for n in range(40))
    table = "| a | b |\n|---|---|\n" + "\n".join(f"| {n} | v{n} |" for n in range(40))
    unit = "\n\n".join([prose, code, numbered, quote, table]) + "\n\n"
    return (unit * (size // len(unit) + 1))[:size]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="20000,100000,1000000")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    for size in (int(s) for s in args.sizes.split(",")):
        text = answer(size)
        for limit in LIMITS:
            times = []
            for _ in range(args.rounds):
                started = time.perf_counter()
                parts = split_markdown(text, limit)
                times.append(time.perf_counter() - started)
            print(f"{size:>9,} chars at {limit:>6,}: {statistics.median(times) * 1000:8.1f} ms median, "
                  f"{len(parts)} parts")


if __name__ == "__main__":
    main()
