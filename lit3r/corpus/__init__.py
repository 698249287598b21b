"""Papers in: ingest files, parse them into blocks, chunk the blocks."""
