"""The agent: LLM factory, graph state, tool adapters, nodes and trace."""
