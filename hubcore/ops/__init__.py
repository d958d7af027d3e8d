"""Operations on a whole data directory: backups, restore, and (the CHECK helper's) checks.

`manifest` is shared: a backup writes one, restore and `check` verify against it.
"""
