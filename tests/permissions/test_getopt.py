"""The getopt model: options and operands split as getopt / getopt_long split them."""

from __future__ import annotations

import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolrun.permissions.options import Parsed, flag, optional, parse, spec, value
from toolrun.permissions.programs import parsed
from toolrun.permissions.words import Word

# A grep-like table: -e/-f take values, -r -n -s flags, --from-file and --fromage share a prefix.
SPEC = spec(
    value("-e", "--regexp"), value("-f", "--file"), flag("-r", "--recursive"), flag("-n"),
    flag("-s", "--no-messages"), value("--from-file"), flag("--fromage"),
    optional("-i", "--in-place"), optional("--color"),
)  # fmt: skip


def split(*words: str, table: object = SPEC) -> Parsed:
    return parse(table, [Word(w, w) for w in words])  # type: ignore[arg-type]


def operands(result: Parsed) -> list[str]:
    return [w.text for w in result.operands]


@pytest.mark.parametrize(
    ("words", "pattern", "files"),
    [
        (("-e.", ".env"), ".", [".env"]),  # glued value: .env is the file
        (("-se.", ".env"), ".", [".env"]),  # bundle then glued value
        (("-e", ".", "--", ".env"), ".", [".env"]),
        (("--regexp=.", ".env"), ".", [".env"]),
        (("--reg", ".", ".env"), ".", [".env"]),  # unambiguous prefix
        ((".env", "-e", "."), ".", [".env"]),  # GNU permutes: options after operands
        (("-rne", "x", "src"), "x", ["src"]),
    ],
)
def test_values_and_operands(words: tuple[str, ...], pattern: str, files: list[str]) -> None:
    result = split(*words)
    assert result.error is None
    assert [w.text for w in result.values("-e")] == [pattern]
    assert operands(result) == files


def test_double_dash_ends_options() -> None:
    assert operands(split("--", "-e", "x")) == ["-e", "x"]


def test_a_lone_dash_is_an_operand() -> None:
    assert operands(split("-n", "-")) == ["-"]


def test_an_unknown_option_is_an_error_and_the_rest_is_still_split() -> None:
    result = split("-q", "x", ".env")
    assert result.error == "unknown option -q"
    assert operands(result) == ["x", ".env"]
    assert split("--frobnicate").error == "unknown option --frobnicate"


def test_an_ambiguous_prefix_is_an_error_and_an_exact_one_is_not() -> None:
    assert split("--from", "x").error == "ambiguous option --from"
    assert split("--fromage").error is None
    assert split("--from-file=.env").values("--from-file")[0].text == ".env"


def test_optional_values_are_only_glued() -> None:
    assert split("-i.bak", "f").values("-i")[0].text == ".bak"
    assert split("-i", "f").values("-i") == () and operands(split("-i", "f")) == ["f"]
    assert split("--color", "f").values("--color") == ()
    assert split("--color=never", "f").values("--color")[0].text == "never"


def test_a_flag_given_a_value_and_a_missing_value_are_errors() -> None:
    assert split("--recursive=yes").error == "option --recursive takes no value"
    assert split("-e").error == "option -e needs a value"


def test_no_permutation_stops_at_the_first_operand() -> None:
    awk = spec(value("-F"), flag("-b"), permute=False)
    result = split("-F:", "{print}", "-b", table=awk)
    assert operands(result) == ["{print}", "-b"]


def test_no_abbreviations_for_parsers_that_take_none() -> None:
    rg = spec(value("--file"), abbreviations=False)
    assert split("--fil", "x", table=rg).error == "unknown option --fil"


def test_obsolete_numbers() -> None:
    head = spec(value("-n"), numbers=r"-\d+", numbers_first=True)
    assert split("-5", "f", table=head).has("-NUM")
    assert split("f", "-5", table=head).error == "unknown option -5"


def test_values_not_glued_for_tree_style_parsers() -> None:
    tree = spec(value("-o"), flag("-a"), glued=False)
    result = split("-oa", "F", table=tree)
    assert result.values("-o")[0].text == "F" and result.has("-a")


def test_dynamic_words_are_operands() -> None:
    result = parse(SPEC, [Word("$X", None), Word("*.py", "*.py", glob=True)])
    assert [w.raw for w in result.operands] == ["$X", "*.py"]


def test_real_tables() -> None:
    """Each row: the program's own parse (GNU manuals: grep, sed, diffutils, coreutils)."""

    def argv(*words: str) -> tuple[Word, ...]:
        return tuple(Word(w, w) for w in words)

    grep = parsed(argv("grep", "-d", "recurse", "K", "."))
    assert grep is not None and grep.values("-d")[0].text == "recurse"
    diff = parsed(argv("diff", "--from", ".env", "x"))  # --from-file is the only --from...
    assert diff is not None and diff.values("--from-file")[0].text == ".env"
    sed = parsed(argv("sed", "-n", "-ep", ".env"))
    assert sed is not None and [w.text for w in sed.operands] == [".env"]
    sort = parsed(argv("sort", "--outp=x", "f"))
    assert sort is not None and sort.values("-o")[0].text == "x"
    ls = parsed(argv("ls", "-la", "--frob"))
    assert ls is not None and ls.error == "unknown option --frob"


_LETTERS = "ernsi"
_word = st.one_of(
    st.sampled_from(["-e", "-f", "-r", "-n", "-s", "--", "-", "--regexp", "--file=x",
                     "--recursive", "--from-file", "-i.bak"]),
    st.text(string.ascii_lowercase + ".", min_size=1, max_size=4),
    st.text(_LETTERS, min_size=1, max_size=4).map(lambda s: "-" + s),
)


@given(st.lists(_word, max_size=8))
def test_every_word_is_an_option_a_value_or_an_operand(words: list[str]) -> None:
    """No word is lost or used twice (a word is the option, its value, or an operand)."""
    items = [Word(w, w) for w in words]
    result = parse(SPEC, items)
    used = {id(g.word) for g in result.given} | {id(g.value) for g in result.given if g.value}
    used |= {id(w) for w in result.operands}
    skipped = [w for w in items if id(w) not in used]
    # only `--` and unknown options are neither
    assert all(w.text == "--" or result.error is not None for w in skipped)
    if "--" not in words:
        for operand in result.operands:
            assert not operand.text.startswith("-") or operand.text == "-"
