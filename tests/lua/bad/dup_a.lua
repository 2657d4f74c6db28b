return { id = "bad.dup", title = "First", severity = "info", sources = { "*" },
         check = function() end }
