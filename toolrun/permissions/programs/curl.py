"""curl and wget: the files they upload or read data from (``-T FILE``, ``-d @FILE``)."""

from __future__ import annotations

from toolrun.permissions.programs import option_values
from toolrun.permissions.words import Word

NAMES = frozenset({"curl", "wget"})
#: Start-up files whose options write files (curl(1) CURL_HOME/.curlrc `output`, wget(1)
#: WGETRC), and curl's TLS key log it writes (envcode reads this).
CODE_ENV = frozenset({"CURL_HOME", "WGETRC", "SYSTEM_WGETRC", "SSLKEYLOGFILE"})
_AT_OPTIONS = ("--data", "--data-binary", "--data-raw", "--data-urlencode", "--json", "--form")


def option_reads(argv: tuple[Word, ...]) -> tuple[Word, ...]:
    if argv[0].value == "wget":
        files = option_values(argv, "i", ("--input-file", "--post-file", "--body-file"))
        return tuple(files)
    out = list(option_values(argv, "TK", ("--upload-file", "--config", "--netrc-file")))
    for word in option_values(argv, "dF", _AT_OPTIONS):
        value = word.value or ""
        # -d @file, -F name=@file or name=<file: curl reads the file.
        for marker in ("@", "<"):
            at = value.find(marker)
            if at >= 0 and value[at + 1 :]:
                path = value[at + 1 :].split(";", 1)[0]
                out.append(Word(path, path))
                break
    return tuple(out)
