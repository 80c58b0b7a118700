"""The model catalogue (MODELS_FILE, TOML) and the skills (SKILLS_DIR/<folder>/SKILL.md).

models.toml:

    [[models]]
    id = "fast"                       # what users pick (`/hermes model fast`, modelId)
    name = "GPT-4o mini"              # shown in menus (default: the id)
    model = "gpt-4o-mini"             # the provider's model name (default: the id)
    base_url = "http://127.0.0.1:8000/v1"   # optional; default: the Bridge's OPENAI_BASE_URL
    api_key_env = "FAST_API_KEY"      # optional; names a variable of the Bridge, never the key
    default = true                    # optional; the model of sessions that chose none
    input_price = 0.15                # optional; per million prompt tokens (USD)
    output_price = 0.60               # optional; per million completion tokens
    cached_price = 0.075              # optional; per million cached prompt tokens (default:
                                      # the input price)

A model without `input_price` and `output_price` is counted in tokens only (its calls have no
cost); a call's cost is stored with it, so a later price change does not rewrite history.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from core.agent.prices import Price
from core.errors import InvalidInput, NotFound

_SKILL_FOLDER = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


@dataclass(frozen=True, slots=True)
class ModelEntry:
    id: str
    name: str
    model: str
    base_url: str | None = None
    api_key_env: str | None = None
    default: bool = False
    price: Price | None = None  # None: its calls are counted in tokens only


@dataclass(frozen=True, slots=True)
class Skill:
    folder: str
    name: str
    description: str
    content: str


@dataclass(frozen=True, slots=True)
class Catalogue:
    """What users may choose from; read once at start (a missing file means an empty list)."""

    models: tuple[ModelEntry, ...]
    skills_dir: Path

    def model(self, model_id: str) -> ModelEntry:
        """The model with this id, or NotFound naming the ones there are."""
        for entry in self.models:
            if entry.id == model_id:
                return entry
        known = ", ".join(m.id for m in self.models) or "none configured"
        raise NotFound(f"unknown model {model_id!r} (models: {known})")

    def key_envs(self) -> tuple[str, ...]:
        """The environment variables the models name for their keys, each once, in order."""
        return tuple(dict.fromkeys(m.api_key_env for m in self.models if m.api_key_env))

    def default_model(self) -> ModelEntry | None:
        """The model marked default, else None (the Bridge's own default applies)."""
        return next((m for m in self.models if m.default), None)

    def skills(self) -> list[Skill]:
        """Every folder of SKILLS_DIR that holds a SKILL.md, by folder name."""
        if not self.skills_dir.is_dir():
            return []
        folders = sorted(p.name for p in self.skills_dir.iterdir())
        return [_read_skill(f, path) for f in folders if (path := self._skill_file(f))]

    def skill(self, folder: str) -> Skill:
        """The skill in SKILLS_DIR/<folder>; a name that could leave SKILLS_DIR is refused."""
        if not _SKILL_FOLDER.match(folder):
            raise InvalidInput(f"{folder!r} is not a skill name")
        path = self._skill_file(folder)
        if path is None:
            raise NotFound(f"unknown skill {folder!r}")
        return _read_skill(folder, path)

    def _skill_file(self, folder: str) -> Path | None:
        """SKILLS_DIR/<folder>/SKILL.md with links followed, if that is a file inside SKILLS_DIR
        (a symlink to elsewhere is no skill: listing it would read files outside)."""
        if not _SKILL_FOLDER.match(folder):
            return None
        path = (self.skills_dir / folder / "SKILL.md").resolve()
        return path if self.skills_dir.resolve() in path.parents and path.is_file() else None


def load_catalogue(models_file: str, skills_dir: str) -> Catalogue:
    """Read MODELS_FILE (absent: no models) and remember SKILLS_DIR."""
    path = Path(models_file)
    entries: list[ModelEntry] = []
    if path.exists():
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as error:
            raise InvalidInput(f"{models_file} is not valid TOML: {error}") from None
        except (OSError, UnicodeDecodeError) as error:
            reason = error.strerror if isinstance(error, OSError) else "not UTF-8 text"
            raise InvalidInput(f"cannot read {models_file} ({reason})") from None
        entries = [_model_entry(item, models_file) for item in data.get("models", [])]
    return Catalogue(tuple(entries), Path(skills_dir))


def _model_entry(item: object, source: str) -> ModelEntry:
    if not isinstance(item, dict) or not isinstance(item.get("id"), str) or not item["id"]:
        raise InvalidInput(f"every [[models]] entry of {source} needs a string id")
    return ModelEntry(
        id=item["id"], name=str(item.get("name") or item["id"]),
        model=str(item.get("model") or item["id"]), base_url=item.get("base_url"),
        api_key_env=item.get("api_key_env"), default=bool(item.get("default", False)),
        price=_price(item, source),
    )


_PRICES = ("input_price", "output_price", "cached_price")


def _price(item: dict, source: str) -> Price | None:
    """The entry's prices, or None when it names neither an input nor an output price."""
    given = {key: item[key] for key in _PRICES if item.get(key) is not None}
    for key, value in given.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise InvalidInput(f"model {item['id']!r} of {source}: {key} must be a number "
                               f"of at least 0 (per million tokens), not {value!r}")
    if "input_price" not in given and "output_price" not in given:
        return None
    cached = given.get("cached_price")
    return Price(float(given.get("input_price", 0.0)), float(given.get("output_price", 0.0)),
                 None if cached is None else float(cached))


def _read_skill(folder: str, path: Path) -> Skill:
    text = path.read_text(encoding="utf-8")
    meta: dict[str, str] = {}
    body = text
    if text.startswith("---"):
        head, _, body = text[3:].partition("\n---")
        for line in head.splitlines():
            key, sep, value = line.partition(":")
            if sep:
                meta[key.strip().lower()] = value.strip().strip("\"'")
    return Skill(folder, meta.get("name") or folder, meta.get("description", ""), body.strip())


def skill_system_prompt(skill: Skill) -> str:
    """The system prompt of a run with a chosen skill."""
    return f"Use the {skill.name} skill to complete the task.\n\n{skill.content}".strip()
