"""The child of `test_actor_crash`: many writers through one store actor, until it is killed.

Usage: python crash_writer.py DB_PATH WRITERS

Each writer task inserts rows of random size through `StoreActor.execute` and, only after
`execute` returned (the row's batch committed), prints the row id on its own line (flushed). The
parent kills this process with SIGKILL at a random moment and checks every printed id is stored.
"""

from __future__ import annotations

import os
import random
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path

import anyio

from hubcore.store.actor import StoreActor


def setup(conn: sqlite3.Connection) -> None:
    conn.execute("CREATE TABLE IF NOT EXISTS acked (id INTEGER PRIMARY KEY, writer INTEGER NOT NULL, body BLOB)")


def insert_row(writer: int, body: bytes) -> Callable[[sqlite3.Connection], int]:
    def write(conn: sqlite3.Connection) -> int:
        cur = conn.execute("INSERT INTO acked (writer, body) VALUES (?, ?)", (writer, body))
        assert cur.lastrowid is not None
        return cur.lastrowid

    return write


async def writer(actor: StoreActor, number: int) -> None:
    rng = random.Random(number)
    while True:
        row_id = await actor.execute(insert_row(number, os.urandom(rng.randint(16, 4000))))
        os.write(1, f"{row_id}\n".encode())  # one write per line: a line is whole or absent


async def main(path: Path, writers: int) -> None:
    actor = StoreActor(path, setup=setup, name="crash", mailbox_size=64, max_batch=32)
    async with anyio.create_task_group() as tg:
        await tg.start(actor.run)
        for number in range(writers):
            tg.start_soon(writer, actor, number)


if __name__ == "__main__":
    anyio.run(main, Path(sys.argv[1]), int(sys.argv[2]))
