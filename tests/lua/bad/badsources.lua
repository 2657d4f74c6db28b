return { id = "bad.sources", title = "Sources", severity = "info", sources = "flink",
         check = function() end }
