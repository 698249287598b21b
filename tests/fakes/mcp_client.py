"""Asking lit3r over MCP the way a host does, and checking what comes back."""

from __future__ import annotations

from mcp import Client


async def cited_answer(client: Client, question: str, on_progress=None) -> dict:
    """Ask over MCP and check every citation's quote against the chunk the server returns for it."""
    answer = await client.call_tool("ask", {"question": question}, progress_callback=on_progress)
    assert not answer.is_error, answer.content
    result = answer.structured_content
    assert result["citations"]
    for citation in result["citations"]:
        chunk = (await client.call_tool("get_chunk", {"chunk_id": citation["chunk_id"]})).structured_content
        assert " ".join(citation["quote"].split()) in " ".join(chunk["text"].split())
        assert chunk["paper_id"] == citation["paper_id"] and chunk["locator"] == citation["locator"]
    return result
