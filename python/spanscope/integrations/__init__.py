"""Optional integrations of spanscope with other tools, one module each.

Each is imported only when used, so ``import spanscope`` imports none of
their dependencies: ``pytest_plugin`` (the pytest plugin, entry point
``pytest11``), ``ipython_magics`` (the notebook magics), ``tui`` (a
terminal browser, textual) and ``mcp_server`` (an MCP server, ``mcp``).
They use only the public ``spanscope`` API below them.
"""
