"""lit3r in LangGraph hosts: the subgraph and the six tools for a host agent (:mod:`lit3r.platform.embed`), and
the graph LangGraph Platform serves (:mod:`lit3r.platform.graph`, named in ``langgraph.json``)."""

from lit3r.platform.embed import AgentInput, AgentOutput, CorpusToolkit, agent_subgraph, corpus_tools

__all__ = ["AgentInput", "AgentOutput", "CorpusToolkit", "agent_subgraph", "corpus_tools"]
