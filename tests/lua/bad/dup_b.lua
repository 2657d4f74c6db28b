return { id = "bad.dup", title = "Second", severity = "info", sources = { "*" },
         check = function() end }
