return { title = "No id", severity = "info", sources = { "*" }, check = function() end }
