"""LangGraph wiring only."""
