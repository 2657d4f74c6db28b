-- A rule test, not a rule: the loader must skip *_test.lua files (loading
-- this as a rule would fail: no id, no check).
return { rule = "t.report", cases = {} }
