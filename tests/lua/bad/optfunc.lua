return { id = "bad.optfunc", title = "Options", severity = "info", sources = { "*" },
         options = { f = print }, check = function() end }
