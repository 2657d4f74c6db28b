return { id = "bad.sev", title = "Severity", severity = "fatal", sources = { "*" },
         check = function() end }
