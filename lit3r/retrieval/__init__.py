"""The retrieval machinery the six tools use: chunk search, the Lit3R subquery retrieval (sweep, PRF, candidates,
blended rerank), fusion and pooling rules, Relate (Ranking B and the A/B fusion), rerankers, the relevance gate,
and the model-free decomposer and verifier. Pure functions over an index; nothing here knows about rounds of a
graph, LangGraph or the application."""
