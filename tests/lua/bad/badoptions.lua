return { id = "bad.options", title = "Options", severity = "info", sources = { "*" },
         options = 5, check = function() end }
