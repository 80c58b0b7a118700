"""String constraints of request bodies and queries, stated once so the OpenAPI shows them."""

from __future__ import annotations

from typing import Annotated

import msgspec

# Some non-space character and no NUL (PostgreSQL cannot store NUL in text).
NON_BLANK = r"^[^\x00]*[^\s\x00][^\x00]*$"
NO_NUL = r"^[^\x00]*$"

Title = Annotated[str, msgspec.Meta(min_length=1, max_length=255, pattern=NON_BLANK)]
MessageText = Annotated[str, msgspec.Meta(min_length=1, max_length=100_000, pattern=NON_BLANK)]
ModelId = Annotated[str, msgspec.Meta(min_length=1, max_length=128, pattern=NO_NUL)]
SkillFolder = Annotated[str, msgspec.Meta(min_length=1, max_length=128, pattern=NO_NUL)]
ClarifyId = Annotated[str, msgspec.Meta(min_length=1, max_length=64, pattern=NO_NUL)]
Person = Annotated[str, msgspec.Meta(min_length=1, max_length=64, pattern=NON_BLANK)]
