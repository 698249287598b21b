"""The LLM layer: settings, chat-model factory, errors, structured output, the call wrapper, budget, local server.

Everything that calls a chat model (the planner, the LLM decomposer/verifier/HyDE, the reader, the LLM
reranker, the LLM judge, RAGAS) goes through :class:`lit3r.llm.wrapper.LLM`, so each call gets the same
retries, trace record and budget charge. Nothing here knows about the agent, the graph or the application.
"""
