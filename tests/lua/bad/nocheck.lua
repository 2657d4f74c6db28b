return { id = "bad.nocheck", title = "No check", severity = "info", sources = { "*" } }
