-- Fails while the file is loaded.
local x = nil
return { id = "bad.runtime", title = x.field }
