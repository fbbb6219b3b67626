"""The command line takes options as written: no prefix of an option is taken for it, and an option that
names a folder names one that is there."""

from __future__ import annotations

import argparse

import pytest

from autograder import cli, gradescope

SECRET = "s3cr3t-Value-42"


def test_every_parser_refuses_prefixes_of_its_options():
    """argparse's subparsers do not inherit allow_abbrev from their parent: each must be given it."""
    parser = cli._parser()
    assert parser.allow_abbrev is False
    (subparsers,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    assert set(subparsers.choices) == {"grade", "export", "gradescope", "serve", "bench"}
    assert all(sub.allow_abbrev is False for sub in subparsers.choices.values())


def test_a_secret_given_to_gradescope_is_refused_and_never_printed(tmp_path, capsys):
    """`gradescope --secret VALUE` was taken as --secret-file VALUE, and the error printed VALUE as a path."""
    with pytest.raises(SystemExit) as exited:
        cli.main(["gradescope", "--out", str(tmp_path / "a.zip"), "--secret", SECRET])
    assert exited.value.code == 2
    out, err = capsys.readouterr()
    assert SECRET not in out + err, err
    assert "--secret-file FILE" in err
    with pytest.raises(SystemExit):
        cli.main(["gradescope", "--out", str(tmp_path / "a.zip"), f"--secret={SECRET}"])
    out, err = capsys.readouterr()
    assert SECRET not in out + err and "--secret-file FILE" in err, err
    assert not (tmp_path / "a.zip").exists()


@pytest.mark.parametrize("argv", [
    ["grade", "x.py", "--out", "reports", "--tim", "5"],          # --timeout
    ["grade", "x.py", "--out", "reports", "--quiz"],              # --quiz-counts
    ["grade", "x.py", "--ou", "reports"],                         # --out
    ["export", "--from-grades", "g.csv", "--rost", "r.csv", "--moodle", "m.csv"],  # --roster
    ["gradescope", "--out", "a.zip", "--secret-f", "s.txt"],      # --secret-file
    ["gradescope", "--out", "a.zip", "--secret-file", "s.txt", "--max", "3"],  # --max-submissions
])
def test_a_prefix_of_an_option_is_refused(argv, capsys, monkeypatch):
    monkeypatch.setattr(cli, "grade_command", lambda *a: pytest.fail("graded with a prefix taken for an option"))
    with pytest.raises(SystemExit) as exited:
        cli.main(argv)
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "unrecognized arguments: " in err or "the following arguments are required: " in err, err


def test_the_full_option_is_still_taken():
    args = cli._parser().parse_args(["grade", "x.py", "--out", "reports", "--timeout", "5"])
    assert args.timeout == 5.0


def test_wheels_naming_no_folder_is_an_error_before_anything_is_built(tmp_path, capsys, monkeypatch):
    """`--wheels DIR` with no DIR used to be ignored: the zip then downloaded every package on Gradescope."""
    monkeypatch.setattr(gradescope, "_wheel", lambda *a: pytest.fail("built a wheel for a zip that cannot be made"))
    secret = tmp_path / "secret.txt"
    secret.write_text("course secret\n")
    zip_path = tmp_path / "autograder.zip"
    common = ["gradescope", "--out", str(zip_path), "--secret-file", str(secret)]
    assert cli.main([*common, "--wheels", str(tmp_path / "no-such-folder")]) == 2
    err = capsys.readouterr().err
    assert f"--wheels {tmp_path / 'no-such-folder'}: no such folder" in err, err
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("not a wheel")
    assert cli.main([*common, "--wheels", str(tmp_path / "empty")]) == 2
    assert "no package files" in capsys.readouterr().err
    assert not zip_path.exists()


def test_version_names_the_package_and_the_changelog(capsys):
    from importlib.metadata import version

    with pytest.raises(SystemExit) as exited:
        cli.main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out.strip() == f"attention-exercises {version('attention-exercises')} (what changed: " \
                                              "docs/changelog.md)"


def test_gradescope_help_says_what_building_needs_and_names_run(capsys):
    with pytest.raises(SystemExit):
        cli.main(["gradescope", "--help"])
    out = capsys.readouterr().out
    assert out.startswith("usage: python -m autograder gradescope --out ZIP --secret-file FILE [options]\n"
                          "       python -m autograder gradescope --run ROOT\n")
    assert "(required to build one)" in out and "--run ROOT" in out.split("options:")[1]


def test_every_option_of_every_command_has_help():
    """An option without help shows in --help as a bare name (bench --students once did)."""
    import sys

    from autograder.assignment import CHECKOUT_ROOT

    parsers = [cli._parser()]
    (subparsers,) = [a for a in parsers[0]._actions if isinstance(a, argparse._SubParsersAction)]
    parsers += [p for name, p in subparsers.choices.items() if name != "bench"]
    if CHECKOUT_ROOT is not None:
        sys.path.insert(0, str(CHECKOUT_ROOT))
        from tools import bench

        parsers.append(bench.parser())
    bare = [f"{p.prog} {a.option_strings[0]}" for p in parsers for a in p._actions
            if a.option_strings and not a.help and not isinstance(a, argparse._HelpAction)]
    assert not bare, bare
