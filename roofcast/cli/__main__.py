"""`python -m roofcast.cli`: the `roofcast` command without its console script."""

from roofcast.cli.main import app

app(prog_name="roofcast")
