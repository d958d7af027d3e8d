"""The push part's hub.db schema: devices, and the inbox's delivery receipt (v15, a column on the
feeds part's `inbox`, added with the part that fills it)."""

from __future__ import annotations

from hubcore.store.migrations import Migration, statements

# Web Push (issue 24): one row per subscribed device with its filters (JSON), and the time an
# answer or decision reached the asking agent on its inbox item (a delivery receipt).
V15_PUSH = statements(
    """CREATE TABLE push_devices (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        endpoint TEXT NOT NULL UNIQUE,
        p256dh TEXT NOT NULL,
        auth TEXT NOT NULL,
        filters TEXT NOT NULL,
        created_at REAL NOT NULL,
        last_delivered_at REAL,
        last_result TEXT
    )""",
    """ALTER TABLE inbox ADD COLUMN delivered_at REAL""",
)

MIGRATIONS: tuple[Migration, ...] = (Migration(15, "push devices and delivery receipts", V15_PUSH),)
