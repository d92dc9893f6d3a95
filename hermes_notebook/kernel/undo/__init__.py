"""Undo variables after an approved run: :mod:`.savepoint` saves what the code may touch before it runs and
offers Undo afterwards only where it can be honest."""

__all__: list[str] = []
