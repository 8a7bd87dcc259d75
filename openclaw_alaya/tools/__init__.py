"""The memory as tools an agent calls on purpose (catalog.py), and the MCP server that offers
them to Claude Code, Cursor and any other MCP client (mcp_server.py)."""
