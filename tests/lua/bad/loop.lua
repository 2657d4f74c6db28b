-- Never finishes loading: stopped by the instruction budget.
while true do end
