-- A syntax error on line 4.
return {
  id = "bad.syntax",
  title = "Syntax" "error",
}
