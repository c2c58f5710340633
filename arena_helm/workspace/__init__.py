"""The workspace family: interactive workspaces (JupyterLab, code-server, a shell) next to the data."""
