"""Search (issue 15): the one lexical index in hub.db (`index`), what each family feeds it
(`sources`), and queries over it with the caller's visibility (`query`, `service`)."""
