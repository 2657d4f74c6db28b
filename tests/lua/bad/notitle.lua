return { id = "bad.notitle", severity = "info", sources = { "*" }, check = function() end }
