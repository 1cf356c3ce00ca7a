"""Hostile test files: names and metadata that try to be code.

A recording from someone else may hold region names, metadata values,
labels, thread names and tags built to break whatever shows them: an HTML
page (a script injection), a JSON document (quotes, U+2028), a terminal
(ANSI and OSC escape sequences, C1 controls, carriage returns), a table
(a 1 MiB name), a format string, or bytes that are not UTF-8 at all.  The
writers here make such files, through spanscope's own writer where it
takes such names and with h5py or raw bytes where it refuses them (a file
"from others"); tests/python/test_hostile_names.py runs every output over
them (issue 15 part 3).

The marker: a name that runs as script in the HTML page sets
document.title to INJECTED and adds an element with id INJECTED, so a
test of the page (Chromium's dumped DOM) can tell whether any ran.
"""
import json
import re
import threading

import numpy as np

INJECTED = "sps-injected-marker"
_JS = (f"document.title='{INJECTED}';"
       f"document.body.insertAdjacentHTML('beforeend','<i id={INJECTED}></i>')")

# Names that are valid UTF-8 (Python str), each trying one trick.
TEXT_NAMES = [
    f"</script><script>{_JS}</script>",        # ends the data blob, starts a script
    f"<img src=x onerror=\"{_JS}\">",          # runs where the page uses innerHTML
    "<!--<script>",                            # changes the HTML parser's state
    "\"quotes' and \\backslashes\\\"",         # JSON/attribute/CSV quoting
    "ls\u2028ps\u2029end",                     # JavaScript line terminators
    "\x1b[2J\x1b[31mclear-red",                # ANSI CSI: clear screen, colour
    "osc\x1b]0;title\x07",                     # OSC: set the terminal's title
    "c1\u009b2Jcsi",                           # C1 CSI (U+009B, valid UTF-8)
    "cr\rback\bdel\x7f",                       # carriage return, backspace, DEL
    "tab\tnl\nnext",                           # tab and newline inside a name
    "%s%n%x{0}{name}",                         # format strings
    "ok-name",                                 # one plain name among them
]

# Byte names that are not valid UTF-8: what only a file from others holds.
BAD_BYTES = [
    b"lone\xff",                 # a byte that starts nothing
    b"trunc\xe2\x82",            # a truncated three-byte sequence
    b"overlong\xc0\xaf",         # an overlong '/'
    b"surrogate\xed\xa0\x80",    # an encoded UTF-16 surrogate
    b"rawc1\x9b2J",              # a raw C1 CSI byte (not UTF-8)
]

BIG_NAME = "B" * (1 << 20)       # 1 MiB: must not make a table unusable

THREAD_NAME = "thr\x1b[31m</script><script>" + _JS + "</script>"
LABEL = "label</script>\x1b]0;t\x07\u2028"
META = {
    "hostile_text": "meta</script><script>" + _JS + "</script>\x1b[2J",
    "hostile_list": ["a\x1b[31m", "b</script>", "c\u2028"],
}


def repaired(b: bytes) -> str:
    """A byte name as spanscope's readers give it: each byte that starts no
    valid UTF-8 sequence becomes U+FFFD (Python's "replace" handler differs
    on truncated sequences, so this follows sps__utf8_len's rule)."""
    out, i = [], 0
    while i < len(b):
        for k in (4, 3, 2, 1):
            try:
                piece = b[i:i + k].decode("utf-8", "strict")
            except UnicodeDecodeError:
                continue
            if len(piece) == 1:
                out.append(piece)
                i += k
                break
        else:
            out.append("\ufffd")
            i += 1
    return "".join(out)


def write_own_h5(path):
    """A recording written by spanscope's own writer (ProfileManager) with
    every TEXT_NAMES name (each with a child "child" and called twice), a
    hostile label, thread name, /metadata value and counter names.
    Returns path."""
    from spanscope import ProfileManager as PM
    from spanscope import _ext

    PM.setup(file_path=str(path), label=LABEL, track_threads=True, replace=True)
    for _ in range(2):
        for n in TEXT_NAMES:
            with PM.region(n):
                with PM.region("child"):
                    pass

    def work():
        with PM.region(TEXT_NAMES[0]):
            pass

    t = threading.Thread(target=work, name=THREAD_NAME)
    t.start()
    t.join()
    _ext.metadata_set("hostile_text", META["hostile_text"])  # str values only
    import spanscope
    for i, n in enumerate(TEXT_NAMES[:8]):  # counter names: the report's counter table
        spanscope.counter(n, float(i))
    PM.finalize(verbose=False)
    return path


def write_foreign_h5(path, tmp_dir):
    """A recording "from others": spanscope's own file, then with h5py its
    names replaced by TEXT_NAMES + BAD_BYTES + BIG_NAME (byte strings in
    the UTF-8 string type, as a careless writer leaves them), thread names,
    tags and /metadata values hostile too.  Returns (path, names), names
    the region names as spanscope's readers give them (invalid bytes as
    U+FFFD), in the file's order."""
    import h5py

    from spanscope import ProfileManager as PM

    raw = [n.encode() for n in TEXT_NAMES] + BAD_BYTES + [BIG_NAME.encode()]
    PM.setup(file_path=str(path), label=LABEL, track_threads=True, replace=True)
    for i in range(len(raw)):
        with PM.region(f"n{i:03d}"):
            pass
    PM.finalize(verbose=False)
    with h5py.File(path, "r+") as f:
        old = [x.decode() for x in f["region_table/names"][:]]
        new = [raw[int(x[1:])] if x.startswith("n") and x[1:].isdigit() else x.encode()
               for x in old]
        del f["region_table/names"]
        f.create_dataset("region_table/names", data=np.array(new, dtype=object),
                         dtype=h5py.string_dtype("utf-8"))
        if "thread_table/name" in f:
            k = f["thread_table/name"].shape[0]
            del f["thread_table/name"]
            f.create_dataset("thread_table/name",
                             data=np.array([THREAD_NAME.encode() + b"\xff"] * k, dtype=object),
                             dtype=h5py.string_dtype("utf-8"))
        k = f["rank_region_index/tags"].shape[0]
        del f["rank_region_index/tags"]
        f.create_dataset("rank_region_index/tags",
                         data=np.array([json.dumps(["t</script>\x1b[2J"]).encode()] * k,
                                       dtype=object), dtype=h5py.string_dtype("utf-8"))
        m = f["metadata"].attrs
        m["label"] = LABEL
        m["hostile_text"] = META["hostile_text"]
        m.create("hostile_list", META["hostile_list"], dtype=h5py.string_dtype())
        m.create("hostile_bad_utf8", np.array([b"v\xff\x1b[2J"], dtype=object),
                 dtype=h5py.string_dtype("utf-8"))
    return path, [repaired(n) for n in new]


def chrome_trace_bytes():
    """A Chrome trace JSON (bytes) "from others": spans named by every
    hostile name (invalid UTF-8 as raw bytes in the JSON text, controls
    as \\u escapes), hostile process and thread names and args, two
    threads.  The reader repairs the bytes; the names it gives are
    trace_names()."""
    def s(x):
        if isinstance(x, bytes):
            x = x.replace(b"\\", b"\\\\").replace(b'"', b'\\"')
            return b'"' + re.sub(rb"[\x00-\x1f]", lambda m: b"\\u%04x" % m[0][0], x) + b'"'
        return json.dumps(x).encode()

    ev = []
    t = 0
    for i, n in enumerate([*TEXT_NAMES, *BAD_BYTES, BIG_NAME]):
        tid = 1 + i % 2
        ev.append(b'{"ph":"X","pid":7,"tid":%d,"ts":%d,"dur":10,"name":%s,'
                  b'"cat":%s,"args":{"k":%s}}' % (tid, t, s(n), s(n), s(n)))
        t += 20
    ev.append(b'{"ph":"M","pid":7,"tid":0,"name":"process_name","args":{"name":%s}}'
              % s(LABEL))
    for tid in (1, 2):
        ev.append(b'{"ph":"M","pid":7,"tid":%d,"name":"thread_name","args":{"name":%s}}'
                  % (tid, s(THREAD_NAME.encode() + b"\xff")))
    return b'{"traceEvents":[' + b",".join(ev) + b'],"displayTimeUnit":"ns"}'


def trace_names():
    """The span names of chrome_trace_bytes() as the reader gives them."""
    return [*TEXT_NAMES, *(repaired(b) for b in BAD_BYTES), BIG_NAME]


def write_chrome_trace(path):
    path.write_bytes(chrome_trace_bytes())
    return path


# Bytes no terminal output may hold: C0 controls but newline, DEL, and the
# C1 controls (as UTF-8, U+0080..U+009F, and as raw bytes).
def terminal_unsafe(text: str) -> list[str]:
    """The characters of text a terminal could act on (ESC, C0 but \\n,
    DEL, C1, U+2028/2029 are allowed: terminals do not act on them)."""
    return sorted({c for c in text
                   if (ord(c) < 0x20 and c != "\n") or 0x7f <= ord(c) <= 0x9f})
