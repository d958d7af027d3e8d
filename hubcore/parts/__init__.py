"""Parts: the features the hub is made of, each a registered unit. The protocol a part implements
is `hubcore.parts.protocol`; each part is a module here; `hubcore.hub.build_parts` is the one list."""

from hubcore.parts.protocol import (
    DecisionHook,
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
