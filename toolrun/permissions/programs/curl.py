"""curl and wget: the files they write (``-o``, ``-O``, ``-D``, ``-c``, logs...), the files
they read and send (``-T FILE``, ``-d @FILE``, ``-b FILE``), and ``file://`` URLs (reads).

Both parse getopt-style: letters bundle and glue (``-so~/x`` is ``-s -o ~/x``), long
options may be abbreviated (``--outp``) and switches negated (``--no-silent``). Where the
name written is chosen by the server (``-J``, ``--content-disposition``, recursion) or by
a config file (``-K``, ``wget -e``), the file written is unknown: not analysable.
"""

from __future__ import annotations

import posixpath
import re
from urllib.parse import unquote, urlsplit

from toolrun.permissions.options import Parsed, flag, spec, value
from toolrun.permissions.programs import parsed, unknown_file
from toolrun.permissions.words import Word

NAMES = frozenset({"curl", "wget"})
#: An option can write or read: a word that might become one is never trusted.
DANGEROUS_OPTIONS = True

_CURL_FLAGS = (
    "--anyauth -a/--append --basic --cert-status --compressed --compressed-ssh --create-dirs "
    "--crlf --digest -q/--disable --disable-eprt --disable-epsv --disallow-username-in-url "
    "--doh-cert-status --doh-insecure -f/--fail --fail-early --fail-with-body --false-start "
    "--form-escape --ftp-create-dirs --ftp-pasv --ftp-pret --ftp-skip-pasv-ip --ftp-ssl-ccc "
    "--ftp-ssl-control -G/--get -g/--globoff --haproxy-protocol -I/--head --http0.9 "
    "-0/--http1.0 --http1.1 --http2 --http2-prior-knowledge --http3 --http3-only "
    "--ignore-content-length -i/--include -k/--insecure -4/--ipv4 -6/--ipv6 "
    "-j/--junk-session-cookies -l/--list-only -L/--location --location-trusted "
    "--mail-rcpt-allowfails -M/--manual --metalink --negotiate -n/--netrc --netrc-optional "
    "-:/--next --alpn -N/--buffer --clobber --keepalive --npn --progress-meter --sessionid "
    "--ntlm --ntlm-wb -Z/--parallel --parallel-immediate --path-as-is --post301 --post302 "
    "--post303 --proxy-anyauth --proxy-basic --proxy-digest --proxy-insecure "
    "--proxy-negotiate --proxy-ntlm --proxy-ssl-allow-beast --proxy-ssl-auto-client-cert "
    "--proxy-tlsv1 -p/--proxytunnel --raw -J/--remote-header-name -O/--remote-name "
    "--remote-name-all -R/--remote-time --remove-on-error --retry-all-errors "
    "--retry-connrefused --sasl-ir -S/--show-error -s/--silent --socks5-basic "
    "--socks5-gssapi --socks5-gssapi-nec --ssl --ssl-allow-beast --ssl-auto-client-cert "
    "--ssl-no-revoke --ssl-reqd --ssl-revoke-best-effort -2/--sslv2 -3/--sslv3 "
    "--styled-output --suppress-connect-headers --tcp-fastopen --tcp-nodelay "
    "--tftp-no-options -1/--tlsv1 --tlsv1.0 --tlsv1.1 --tlsv1.2 --tlsv1.3 --tr-encoding "
    "--trace-time -B/--use-ascii -v/--verbose -V/--version --xattr -#/--progress-bar "
    "-h/--help --ca-native --proxy-ca-native --show-headers --skip-existing --mptcp "
    "--proxy-http2 --trace-ids --trace-config --ssl-sessions --follow --out-null"
)
_CURL_VALUES = (
    "--abstract-unix-socket --alt-svc --aws-sigv4 --cacert --capath -E/--cert --cert-type "
    "--ciphers -K/--config --connect-timeout --connect-to -C/--continue-at -b/--cookie "
    "-c/--cookie-jar --create-file-mode --crlfile --curves -d/--data --data-ascii "
    "--data-binary --data-raw --data-urlencode --delegation --dns-interface --dns-ipv4-addr "
    "--dns-ipv6-addr --dns-servers --doh-url -D/--dump-header --egd-file --engine "
    "--etag-compare --etag-save --expect100-timeout -F/--form --form-string --ftp-account "
    "--ftp-alternative-to-user --ftp-method -P/--ftp-port --ftp-ssl-ccc-mode "
    "--happy-eyeballs-timeout-ms -H/--header --hostpubmd5 --hostpubsha256 --hsts --interface "
    "--json --keepalive-time --key --key-type --krb --libcurl --limit-rate --local-port "
    "--login-options --mail-auth --mail-from --mail-rcpt --max-filesize --max-redirs "
    "-m/--max-time --netrc-file --noproxy --oauth2-bearer -o/--output --output-dir "
    "--parallel-max --pass --pinnedpubkey --proto --proto-default --proto-redir "
    "--proxy-cacert --proxy-capath --proxy-cert --proxy-cert-type --proxy-ciphers "
    "--proxy-crlfile --proxy-header --proxy-key --proxy-key-type --proxy-pass "
    "--proxy-pinnedpubkey --proxy-service-name --proxy-tls13-ciphers --proxy-tlsauthtype "
    "--proxy-tlspassword --proxy-tlsuser -U/--proxy-user --proxy1.0 --pubkey -Q/--quote "
    "--random-file -r/--range --rate -e/--referer -X/--request --request-target --resolve "
    "--retry --retry-delay --retry-max-time --sasl-authzid --service-name --socks4 "
    "--socks4a --socks5 --socks5-gssapi-service --socks5-hostname -Y/--speed-limit "
    "-y/--speed-time --stderr -t/--telnet-option --tftp-blksize -z/--time-cond --tls-max "
    "--tls13-ciphers --tlsauthtype --tlspassword --tlsuser --trace --trace-ascii "
    "--unix-socket -T/--upload-file --url --url-query -u/--user -A/--user-agent "
    "-w/--write-out -x/--proxy --preproxy --variable --expand-data --expand-url "
    "--expand-header --expand-output --ip-tos --vlan-priority --ech --sigalgs "
    "--ipfs-gateway --keepalive-cnt --knownhosts --upload-flags --haproxy-clientip"
)


def _names(text: str) -> list[tuple[str, ...]]:
    return [tuple(entry.split("/")) for entry in text.split()]


CURL = spec(
    *(flag(*n) for n in _names(_CURL_FLAGS)), *(value(*n) for n in _names(_CURL_VALUES)),
    negatable=True, help_version=False,
)
_WGET_FLAGS = (
    "-V/--version -h/--help -b/--background -d/--debug -q/--quiet -v/--verbose "
    "-F/--force-html --retry-connrefused -c/--continue --show-progress -N/--timestamping "
    "--if-modified-since --use-server-timestamps -S/--server-response --spider "
    "--random-wait --proxy --dns-cache --ignore-case -4/--inet4-only -6/--inet6-only "
    "--ask-password --iri --unlink --xattr --directories -x/--force-directories "
    "--host-directories --protocol-directories --cache -E/--adjust-extension "
    "--ignore-length --save-headers --http-keep-alive --cookies --keep-session-cookies "
    "--content-disposition --content-on-error --auth-no-challenge --https-only "
    "--check-certificate --hsts --remove-listing --glob --passive-ftp "
    "--preserve-permissions --retr-symlinks --ftps-implicit --ftps-resume-ssl "
    "--ftps-clear-data-connection --ftps-fallback-to-ftp --warc-cdx --warc-compression "
    "--warc-digests --warc-keep-log -r/--recursive --delete-after -k/--convert-links "
    "--convert-file-only -K/--backup-converted -m/--mirror -p/--page-requisites "
    "--strict-comments --follow-ftp -H/--span-hosts -L/--relative --trust-server-names "
    "--parent --clobber --netrc --no-config --robots"
)
_WGET_VALUES = (
    "-e/--execute -o/--output-file -a/--append-output --report-speed -i/--input-file "
    "-B/--base --config --rejected-log -t/--tries --retry-on-http-error "
    "-O/--output-document --start-pos --progress -T/--timeout --dns-timeout "
    "--connect-timeout --read-timeout -w/--wait --waitretry -Q/--quota --bind-address "
    "--limit-rate --restrict-file-names --prefer-family --user --password --use-askpass "
    "--local-encoding --remote-encoding -P/--directory-prefix --cut-dirs --http-user "
    "--http-password --default-page --header --compression --max-redirect --proxy-user "
    "--proxy-password --referer -U/--user-agent --load-cookies --save-cookies --post-data "
    "--post-file --method --body-data --body-file --secure-protocol --certificate "
    "--certificate-type --private-key --private-key-type --ca-certificate --ca-directory "
    "--crl-file --pinnedpubkey --ciphers --hsts-file --ftp-user --ftp-password --warc-file "
    "--warc-header --warc-max-size --warc-dedup --warc-tempdir -l/--level --backups "
    "-A/--accept -R/--reject --accept-regex --reject-regex --regex-type -D/--domains "
    "--exclude-domains --follow-tags --ignore-tags -I/--include-directories "
    "-X/--exclude-directories -n"
)
WGET = spec(
    *(flag(*n) for n in _names(_WGET_FLAGS)), *(value(*n) for n in _names(_WGET_VALUES)),
    negatable=True,
)
SPECS = {"curl": CURL, "wget": WGET}

#: curl options whose value is a file curl writes.
_CURL_WRITES = ("-o", "-D", "-c", "--etag-save", "--libcurl", "--stderr", "--trace",
                "--trace-ascii", "--hsts", "--alt-svc")
#: ... and reads (``--hsts``/``--alt-svc`` do both).
_CURL_READS = ("-T", "-K", "--netrc-file", "--hsts", "--alt-svc", "--etag-compare", "--cacert",
               "--proxy-cacert", "--crlfile", "--proxy-crlfile", "-E", "--key", "--proxy-cert",
               "--proxy-key", "--pubkey", "--random-file", "--egd-file")
_AT_OPTIONS = ("-d", "--data-binary", "--data-urlencode", "--json", "-F", "-H",
               "--proxy-header", "--variable", "--url-query", "--data-ascii")
_WGET_WRITES = ("-O", "-o", "-a", "--save-cookies", "--rejected-log", "--hsts-file",
                "--warc-file")
_WGET_READS = ("-i", "--post-file", "--body-file", "--load-cookies", "--certificate",
               "--private-key", "--ca-certificate", "--crl-file", "--hsts-file")
#: wget options after which the server (or a config) picks the names written.
_WGET_SERVER_NAMES = ("-r", "-m", "-p", "--content-disposition", "--trust-server-names",
                      "-i", "-x", "-e", "--config", "-k")
_FILE_URL = re.compile(r"(?i)file:")
#: ``-w '%output{FILE}'`` (curl 8.3) writes the rest of the write-out to FILE.
_WRITE_OUT_FILE = re.compile(r"%output\{>?>?([^}]*)\}")


def _is_curl(argv: tuple[Word, ...]) -> bool:
    name = argv[0].value or ""
    return posixpath.basename(name) != "wget"


def _urls(found: Parsed, curl: bool) -> tuple[Word, ...]:
    return (*found.operands, *found.values("--url")) if curl else found.operands


def file_path(url: str) -> str | None:
    """The path a ``file:`` URL reads (``file:///p``, ``FILE://localhost/p``, ``file:/p``)."""
    if not _FILE_URL.match(url):
        return None
    parts = urlsplit(url)
    return unquote(parts.path) or "/"


def _proc_self(path: str) -> Word:
    """``/proc/self/cwd/X`` is X in curl's own directory (not toolrun's): a relative path.
    Other ``/proc/<pid>`` paths name whatever that process has open: unknown here."""
    for prefix in ("/proc/self/cwd/", "/proc/thread-self/cwd/"):
        if path.startswith(prefix):
            rest = "./" + path[len(prefix) :]
            return Word(rest, rest)
    if path.startswith(("/proc/", "/dev/fd/")):
        return unknown_file(f"(what {path} names in the curl process)")
    return Word(path, path)


def _url_reads(urls: tuple[Word, ...]) -> list[Word]:
    out: list[Word] = []
    for word in urls:
        text = word.value
        if text is None or word.glob:
            out.append(unknown_file(f"(the URL {word.raw} may be file://)"))
            continue
        if "{" in text or "[" in text:
            # curl globs URLs: file:///x{a,b} reads more than one path.
            if _FILE_URL.search(text):
                out.append(unknown_file(f"(the files URL {word.raw} expands to)"))
            continue
        path = file_path(text.strip())
        if path is not None:
            out.append(_proc_self(path))
    return out


#: Start-up files whose options write files (curl(1) CURL_HOME/.curlrc `output`, wget(1)
#: WGETRC), and curl's TLS key log it writes (envcode reads this).
CODE_ENV = frozenset({"CURL_HOME", "WGETRC", "SYSTEM_WGETRC", "SSLKEYLOGFILE"})


def option_reads(argv: tuple[Word, ...]) -> tuple[Word, ...]:
    found = parsed(argv)
    if found is None:
        return ()
    curl = _is_curl(argv)
    out = list(found.values(*(_CURL_READS if curl else _WGET_READS)))
    if curl:
        for word in found.values(*_AT_OPTIONS):
            text = word.value
            if text is None:
                out.append(unknown_file(f"(the file {word.raw} may name)"))
                continue
            # -d @file, -F name=@file or name=<file, -H @file: curl reads the file.
            for marker in ("@", "<"):
                at = text.find(marker)
                if at >= 0 and text[at + 1 :] not in ("", "-"):
                    path = text[at + 1 :].split(";", 1)[0]
                    out.append(Word(path, path))
                    break
        # -b FILE (no "="): a cookie file, sent to the server
        out += [w for w in found.values("-b") if w.value is not None and "=" not in w.value]
    out += _url_reads(_urls(found, curl))
    return tuple(w for w in out if w.value != "-")


def _basename(url: Word) -> Word:
    """The file ``-O`` (or wget) writes for ``url``: the last part of its path."""
    text = url.value
    if text is None or url.glob or "{" in text or "[" in text:
        return unknown_file(f"(the file named after {url.raw})")
    name = posixpath.basename(unquote(urlsplit(text).path))
    return Word(name, name) if name else unknown_file(f"(the file named after {url.raw})")


def _in(directory: Word | None, name: Word) -> Word:
    if directory is None or name.value is None:
        return name if directory is None else unknown_file(name.raw)
    if directory.value is None:
        return unknown_file(f"(a file in {directory.raw})")
    joined = posixpath.join(directory.value, name.value)
    return Word(joined, joined, directory.glob, directory.tilde)


def option_writes(argv: tuple[Word, ...]) -> tuple[Word, ...]:
    found = parsed(argv)
    if found is None:
        return ()
    if _is_curl(argv):
        return _curl_writes(found)
    return _wget_writes(found)


def _curl_writes(found: Parsed) -> tuple[Word, ...]:
    out = [w for w in found.values(*_CURL_WRITES) if w.value != "-"]
    if found.has("-K"):
        out.append(unknown_file("(what the curl config file -K says to write)"))
    for word in found.values("-w"):
        if word.value is None:
            out.append(unknown_file(f"(the file {word.raw} may name)"))
            continue
        out += [Word(m, m) for m in _WRITE_OUT_FILE.findall(word.value)]
    directory = found.last("--output-dir")
    urls = _urls(found, True)
    remote = found.has("-O", "--remote-name-all")
    if found.has("-J") and remote:
        out.append(unknown_file("(the file name the server sends, curl -J)"))
    elif remote:
        out += [_in(directory.value if directory else None, _basename(u)) for u in urls]
    elif directory is not None:
        out = [_in(directory.value, w) if (w.value or "/")[:1] != "/" else w for w in out]
    return tuple(out)


def _wget_writes(found: Parsed) -> tuple[Word, ...]:
    out = [w for w in found.values(*_WGET_WRITES) if w.value != "-"]
    if found.has("-O") or found.has("--spider"):
        return tuple(out)
    if found.has(*_WGET_SERVER_NAMES):
        out.append(unknown_file("(the files wget names after the server's answers)"))
        return tuple(out)
    prefix = found.last("-P")
    for url in found.operands:
        name = _basename(url)
        if name.value is None and url.value is not None:
            name = Word("index.html", "index.html")  # wget's name for a URL ending in /
        out.append(_in(prefix.value if prefix else None, name))
    return tuple(out)
