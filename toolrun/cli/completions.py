"""``toolrun completions``: the shell completion script."""

from __future__ import annotations

import click

SHELLS = ("bash", "zsh", "fish")


def completion_script(shell: str) -> str:
    """The script Click generates for ``toolrun`` in ``shell`` (also kept in completions/)."""
    from click.shell_completion import get_completion_class

    from toolrun.cli import main

    cls = get_completion_class(shell)
    assert cls is not None
    return cls(main, {}, "toolrun", "_TOOLRUN_COMPLETE").source()


@click.command()
@click.argument("shell", type=click.Choice(SHELLS))
def completions(shell: str) -> int:
    """Print the completion script for SHELL.

    \b
    bash:  toolrun completions bash > ~/.local/share/bash-completion/completions/toolrun
    zsh:   toolrun completions zsh > "${fpath[1]}/_toolrun"
    fish:  toolrun completions fish > ~/.config/fish/completions/toolrun.fish
    """
    click.echo(completion_script(shell), nl=False)
    return 0
