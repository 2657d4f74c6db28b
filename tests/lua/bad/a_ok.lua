-- The one good rule of this folder: it must load whatever the others do.
return {
  id = "bad.ok", title = "Still loads", severity = "info", sources = { "*" },
  check = function(bundle, ctx) end,
}
