"""An MCP server exposing spanscope's profiles to AI coding agents
(scope-profiler 0.7.5's ``scope_profiler.mcp_server``, over spanscope's reader).

* :mod:`~spanscope.integrations.mcp_server.tools`: the tools as plain
  functions returning JSON-ready dicts (or raising :class:`ToolError`); they
  need no ``mcp`` package, and read profiles only through spanscope's public
  reader (``spanscope.read_profile``, ``read_profile_summary``).
* :mod:`~spanscope.integrations.mcp_server.server`: registers them with the
  ``mcp`` SDK's FastMCP (the optional ``mcp`` extra:
  ``pip install "spanscope[mcp]"``); ``create_server()`` and ``main()``.

Run it with ``python -m spanscope.integrations.mcp_server`` (stdio).
Importing this package never imports ``mcp``.
"""

from spanscope.integrations.mcp_server.tools import TOOL_NAMES, ToolError

__all__ = ["TOOL_NAMES", "ToolError"]
