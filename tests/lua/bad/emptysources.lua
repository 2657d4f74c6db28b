return { id = "bad.emptysources", title = "Sources", severity = "info", sources = {},
         check = function() end }
