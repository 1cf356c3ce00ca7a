"""``python -m spanscope.integrations.mcp_server``: the MCP server on stdio
(scope-profiler's ``python -m scope_profiler.mcp_server``).  Without the
``mcp`` package it prints one line naming the extra to install and exits 2."""

import sys

from spanscope.integrations.mcp_server.server import main

if __name__ == "__main__":
    sys.exit(main())
