"""Indexes on disk: chunk and paper BM25, dense FAISS chunk vectors, paper vectors, citation graph."""
