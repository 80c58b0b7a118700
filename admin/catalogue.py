"""`GET /api/models`, `GET /api/skills`: what sessions may choose."""

from __future__ import annotations

import msgspec
from litestar import Controller, get
from litestar.di import NamedDependency

from admin.openapi import errors
from admin.services import AdminServices


class ModelOut(msgspec.Struct, frozen=True):
    """A model of MODELS_FILE; `id` is what `modelId` names (the key's variable is not shown)."""

    id: str
    name: str
    model: str
    default: bool


class SkillOut(msgspec.Struct, frozen=True):
    """A skill folder of SKILLS_DIR; `folder` is what `skillFolder` names."""

    folder: str
    name: str
    description: str


class CatalogueController(Controller):
    path = "/api"
    tags = ("catalogue",)

    @get("/models", summary="Models sessions may use", responses=errors(database=False))
    async def list_models(self, services: NamedDependency[AdminServices]) -> list[ModelOut]:
        return [ModelOut(m.id, m.name, m.model, m.default) for m in services.catalogue.models]

    @get("/skills", summary="Skills sessions may use", responses=errors(database=False),
         sync_to_thread=True)
    def list_skills(self, services: NamedDependency[AdminServices]) -> list[SkillOut]:
        return [SkillOut(s.folder, s.name, s.description) for s in services.catalogue.skills()]
