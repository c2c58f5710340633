"""The README's sample outputs, read back so that a test can hold them equal to what the command prints."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def text_block_after(marker: str) -> list[str]:
    """The lines of the first ```text block after the first line of the README that contains ``marker``."""
    lines = README.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if marker in line)
    begin = next(i for i in range(start, len(lines)) if lines[i] == "```text") + 1
    end = next(i for i in range(begin, len(lines)) if lines[i] == "```")
    return lines[begin:end]


def table_columns(lines: list[str], count: int) -> list[tuple[str, ...]]:
    """The first ``count`` columns of each row of a table printed by the CLI (columns apart by two spaces or more);
    the blank lines and the last line (a verdict) stay as they are, in one column."""
    return [tuple(re.split(r"\s{2,}", line.strip())[:count]) if re.search(r"\s{2,}", line) else (line,)
            for line in lines]
