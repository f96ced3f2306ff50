"""The READMEs' console examples are real: each `$ specsim ...` line is run and
its output compared with the lines that follow it (README.md and specsim/gpt/README.md)."""
import re
import shlex
from pathlib import Path

import pytest


ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
READMES = [README, ROOT / "specsim" / "gpt" / "README.md"]


def examples():
    text = "\n".join(r.read_text(encoding="utf-8") for r in READMES)
    found = []
    for block in re.findall(r"```console\n(.*?)```", text, flags=re.S):
        command, output = None, []
        for line in block.splitlines():
            if line.startswith("$ "):
                if command:
                    found.append((command, "\n".join(output)))
                command, output = line[2:], []
            else:
                output.append(line)
        if command:
            found.append((command, "\n".join(output)))
    return found


def test_readme_has_examples():
    assert len(examples()) >= 3


@pytest.mark.parametrize("command, expected", examples(), ids=[c for c, _ in examples()])
def test_readme_example_output(cli, command, expected):
    argv = shlex.split(command)
    assert argv[0] == "specsim"
    code, out, err = cli(*argv[1:])
    assert code == 0, err
    assert out.rstrip("\n") == expected.rstrip("\n")


def test_what_is_where_names_every_folder_and_the_layer_test():
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## What is where"):text.index("## References")]
    folders = [f"specsim/{p.name}/" for p in (ROOT / "specsim").iterdir() if (p / "__init__.py").exists()]
    folders += [f"{p.name}/" for p in (ROOT / "app").iterdir() if p.is_dir() and not p.name.startswith(("_", "."))]
    for folder in folders:
        assert f"`{folder}`" in section, f"README's What is where does not describe {folder}"
    assert "tests/test_layers.py" in section and (ROOT / "tests" / "test_layers.py").exists()
    assert len(section.splitlines()) < 60, "What is where is a few lines per folder, not a table of files"
