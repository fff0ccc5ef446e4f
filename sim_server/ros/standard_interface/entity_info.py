"""What the standard tells of an entity beside its state: its category, a description and tags
(``simulation_interfaces/msg/EntityInfo``), and the services get_entity_info and set_entity_info.

Until set_entity_info gives it others, an entity's category comes from its model:
``CATEGORY_ROBOT`` when the model has plugins, else ``CATEGORY_STATIC_OBJECT`` when all its bodies
are static, else ``CATEGORY_DYNAMIC_OBJECT``; its description names its model file; it has no
tags. A pedestrian is ``CATEGORY_HUMAN``, described by its crowd. What set_entity_info gives belongs to that entity: it goes when the entity is deleted (or
the world is reset) and does not pass to a later entity of the same name. Category and tags are
labels only: physics goes by the bodies' types whatever the category says.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING

from Box2D import b2
from rclpy.node import Node
from simulation_interfaces.msg import EntityCategory, EntityInfo
from simulation_interfaces.srv import GetEntityInfo, SetEntityInfo

from sim_server.core.errors import RequestError
from sim_server.core.limits import MAX_DESCRIPTION_CHARS
from sim_server.core.physics.model import Model
from sim_server.core.world import World
from sim_server.ros.services import quoted
from sim_server.ros.standard_interface.results import answer
from sim_server.ros.world_user import WorldUser

if TYPE_CHECKING:
    from sim_server.core.crowd.crowd import Crowd

#: The categories EntityCategory defines (3 is unused).
CATEGORIES = (
    EntityCategory.CATEGORY_OBJECT,
    EntityCategory.CATEGORY_ROBOT,
    EntityCategory.CATEGORY_HUMAN,
    EntityCategory.CATEGORY_DYNAMIC_OBJECT,
    EntityCategory.CATEGORY_STATIC_OBJECT,
)
#: Tags one entity may have.
MAX_TAGS = 256
#: Characters in one tag.
MAX_TAG_CHARS = 256


def physical_category(model: Model) -> int:
    """The category a model's own makeup gives it (see the module's docstring)."""
    if model.spec.plugins:
        return EntityCategory.CATEGORY_ROBOT
    if all(body.physics_body.type == b2.staticBody for body in model.bodies.values()):
        return EntityCategory.CATEGORY_STATIC_OBJECT
    return EntityCategory.CATEGORY_DYNAMIC_OBJECT


def person_named(world: World, name: str) -> tuple[Crowd, int] | None:
    """(crowd, row) of the pedestrian called ``name``, None when a model or nobody is (a model
    comes first)."""
    return None if name in world.models else world.crowds.find(name)


def check_category(category: int, what: str) -> None:
    """RequestError unless ``category`` is one EntityCategory defines; ``what`` names it."""
    if category not in CATEGORIES:
        raise RequestError(f"{what} {category} is not an EntityCategory (one of {', '.join(map(str, CATEGORIES))})")


@dataclass(frozen=True)
class Info:
    """An entity's category, description and tags."""

    category: int
    description: str
    tags: tuple[str, ...]

    def message(self) -> EntityInfo:
        return EntityInfo(
            category=EntityCategory(category=self.category), description=self.description, tags=list(self.tags)
        )


def checked_info(info: EntityInfo) -> Info:
    """The Info an EntityInfo message asks for; RequestError naming the field at fault.
    Repeated tags are kept once, in their first place (the limit counts different tags)."""
    check_category(info.category.category, "info.category")
    if len(info.description) > MAX_DESCRIPTION_CHARS:
        raise RequestError(
            f"info.description has {len(info.description)} characters, more than the limit of {MAX_DESCRIPTION_CHARS}"
        )
    for index, tag in enumerate(info.tags):
        if not tag:
            raise RequestError(f"info.tags[{index}] is empty")
        if len(tag) > MAX_TAG_CHARS:
            raise RequestError(f"info.tags[{index}] has {len(tag)} characters, more than the limit of {MAX_TAG_CHARS}")
    tags = tuple(dict.fromkeys(info.tags))
    if len(tags) > MAX_TAGS:
        raise RequestError(f"info.tags has {len(tags)} different tags, more than the limit of {MAX_TAGS}")
    return Info(info.category.category, info.description, tags)


class EntityInfos(WorldUser):
    """The info of every entity of ``world``, and the services get_entity_info and
    set_entity_info on ``node``."""

    def __init__(self, node: Node, world: World) -> None:
        self._node = node
        self._world = world
        #: What set_entity_info gave, by model or pedestrian object (so it leaves with it).
        self._given: weakref.WeakKeyDictionary[object, Info] = weakref.WeakKeyDictionary()
        self._services = [
            node.create_service(GetEntityInfo, "~/get_entity_info", self._get),
            node.create_service(SetEntityInfo, "~/set_entity_info", self._set),
        ]

    def info(self, model: Model) -> Info:
        """The info of ``model`` now."""
        given = self._given.get(model)
        if given is not None:
            return given
        where = f" in namespace {model.namespace}" if model.namespace else ""
        return Info(physical_category(model), f"Flatland model from {model.spec.path}{where}", ())

    def person_info(self, crowd: Crowd, row: int) -> Info:
        """The info of the pedestrian at ``row`` of ``crowd`` now."""
        person = crowd.people.bodies[row].userData.entity
        given = self._given.get(person)
        if given is not None:
            return given
        return Info(EntityCategory.CATEGORY_HUMAN, f"pedestrian of crowd {crowd.name} ({crowd.spec.model})", ())

    def info_of(self, name: str) -> Info:
        """The info of the entity called ``name`` (EntityError when there is none)."""
        found = person_named(self._world, name)
        return self.person_info(*found) if found is not None else self.info(self._world.model(name))

    def _get(self, request: GetEntityInfo.Request, response: GetEntityInfo.Response) -> GetEntityInfo.Response:
        def get() -> None:
            response.info = self.info_of(request.entity).message()

        answer(response.result, get, f"get_entity_info {quoted(request.entity)}")
        return response

    def _set(self, request: SetEntityInfo.Request, response: SetEntityInfo.Response) -> SetEntityInfo.Response:
        def set_info() -> None:
            name = request.entity
            found = person_named(self._world, name)
            owner = found[0].people.bodies[found[1]].userData.entity if found else self._world.model(name)
            self._given[owner] = checked_info(request.info)

        answer(response.result, set_info, f"set_entity_info {quoted(request.entity)}")
        return response
