"""The integrity part: with `integrity_sample_secs` above 0, a background `quick_check` of one store
file at a time (hub.db and every file the parts list through `Part.files`), and its two metrics.
With the setting at 0 (the default) it brings nothing: no task, no metric.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from hubcore.ops.integrity import IntegrityCollector, IntegritySampler
from hubcore.parts.protocol import Part, Task
from hubcore.services.core import Core

if TYPE_CHECKING:
    from prometheus_client.registry import Collector


class IntegrityPart(Part):
    name = "integrity"

    def __init__(self, core: Core) -> None:
        self.core = core
        interval = core.settings.integrity_sample_secs
        self.sampler = IntegritySampler(self.store_files, interval, clock=core.clock) if interval > 0 else None

    def store_files(self) -> list[Path]:
        """hub.db and every part's store files, as they are now (brains come and go)."""
        data_dir = self.core.settings.data_path
        return [data_dir / "hub.db", *(f for part in self.core.parts for f in part.files(data_dir))]

    def background(self) -> Sequence[Task]:
        return (self.sampler.run,) if self.sampler is not None else ()

    def collectors(self) -> Sequence[Collector]:
        return (IntegrityCollector(self.sampler),) if self.sampler is not None else ()
