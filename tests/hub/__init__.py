"""The real JupyterHub harness of the team tests (tests/browser/test_team_hub_browser.py)."""
