from nesyplan.cli import app

app()
