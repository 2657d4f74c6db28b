return { id = "bad.tags", title = "Tags", severity = "info", sources = { "*" },
         tags = { 1, 2 }, check = function() end }
