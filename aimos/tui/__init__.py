"""`aimos tui`: the Textual app (the only package that imports Textual; `aimos.tui.app` loads it)."""
