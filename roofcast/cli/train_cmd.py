"""CLI verbs of this area; `register` adds them to the main app."""
import typer


def register(app: typer.Typer) -> None:
    """Add this module's commands to `app` (filled in by the owner of this area)."""
