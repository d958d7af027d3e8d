"""Parts: the features the hub is made of, each a registered unit. The protocol a part implements
is `hubcore.parts.protocol`; each part is a module here; `hubcore.hub.build_parts` builds the one
list, whose classes are `hubcore.parts.catalog.PART_TYPES`."""

from hubcore.parts.protocol import (
    DecisionHook,
    FileStore,
    Part,
    Resource,
    ResourceTemplate,
    SearchBatch,
    SearchDoc,
    SearchFamily,
    SearchScope,
    Task,
    add,
    overrides,
)

__all__ = [
    "DecisionHook",
    "FileStore",
    "Part",
    "Resource",
    "ResourceTemplate",
    "SearchBatch",
    "SearchDoc",
    "SearchFamily",
    "SearchScope",
    "Task",
    "add",
    "overrides",
]
