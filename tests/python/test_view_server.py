"""`spanscope view`'s HTTP server (issue 36 parts 2 and 5), spoken to over
raw sockets: the page is served with the token and loads nothing from the
network; every request without the token, with a wrong one, with a foreign
Host (DNS rebinding) or a foreign Origin is refused; the API answers; bad,
oversized and slow requests get their error and block nobody; hostile
files make the tool fail with one line; names that are script text come
out as JSON data; POST /api/quit, SIGINT and SIGTERM stop the server with
exit status 0.  Every wait has a timeout, so a broken server fails the
test instead of hanging it.
"""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import threading
import time

import pytest

import hostile_names as H
from conftest import BUILD

pytest.importorskip("h5py")
from spanscope import ProfileManager  # noqa: E402

CLI = BUILD / "spanscope"
URL_RE = re.compile(r"^spanscope view: http://127\.0\.0\.1:(\d+)/\?token=([0-9a-f]{32,})$")

pytestmark = pytest.mark.skipif(not CLI.exists(), reason=f"no command-line tool at {CLI}")


def write_small_h5(path):
    """A recording with 3 calls of "outer", each around 2 calls of
    "inner": 9 spans.  Returns path."""
    ProfileManager._reset()
    ProfileManager.setup(file_path=str(path), replace=True)
    for _ in range(3):
        with ProfileManager.region("outer"):
            for _ in range(2):
                with ProfileManager.region("inner"):
                    pass
    ProfileManager.finalize(verbose=False)
    ProfileManager._reset()
    return path


class Server:
    """A running `spanscope view`: its process, port and token."""

    def __init__(self, files, tmp, *args, env=None, session=False):
        self.proc = subprocess.Popen(
            [str(CLI), "view", *map(str, files), "--index-dir", str(tmp), "--no-progress",
             *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, start_new_session=session)
        line = read_line(self.proc.stdout, 60)
        m = URL_RE.match(line)
        if not m:
            self.proc.kill()
            err = self.proc.communicate(timeout=10)[1].decode(errors="replace")
            pytest.fail(f"no URL line: {line!r}, stderr {err!r}")
        self.port, self.token = int(m.group(1)), m.group(2)
        self.url = line.split(": ", 1)[1]

    def host(self):
        return f"127.0.0.1:{self.port}"

    def get(self, target, token=True, headers=None, method="GET", body=b""):
        """(status, headers, body) of one request with the right Host and,
        unless token is False, the header token."""
        h = {"Host": self.host()}
        if token:
            h["X-Spanscope-Token"] = self.token
        h.update(headers or {})
        return request(self.port, method, target, h, body)

    def wait(self, timeout=20):
        """The exit status, stdout and stderr once the process has ended."""
        out, err = self.proc.communicate(timeout=timeout)
        return self.proc.returncode, out.decode(errors="replace"), err.decode(errors="replace")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.communicate(timeout=10)


def read_line(stream, timeout):
    """The first line of stream (a pipe), or "" after timeout seconds."""
    got = []
    t = threading.Thread(target=lambda: got.append(stream.readline()), daemon=True)
    t.start()
    t.join(timeout)
    return got[0].decode(errors="replace").strip() if got else ""


def read_response(f):
    """(status, {lower-case header: value}, body) of one answer read from
    f (a socket's makefile("rb")); status None when the server closed the
    connection first."""
    line = f.readline()
    if not line:
        return None, {}, b""
    status = int(line.split()[1])
    headers = {}
    while True:
        line = f.readline().decode("latin-1").rstrip("\r\n")
        if not line:
            break
        k, v = line.split(":", 1)
        headers[k.strip().lower()] = v.strip()
    return status, headers, f.read(int(headers["content-length"]))


def raw(port, data, timeout=10):
    """Sends the bytes data on a new connection: (status, headers, body) of
    the first answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(data)
        with s.makefile("rb") as f:
            return read_response(f)


def request(port, method, target, headers, body=b""):
    head = f"{method} {target} HTTP/1.1\r\n" + "".join(
        f"{k}: {v}\r\n" for k, v in headers.items())
    if body:
        head += f"Content-Length: {len(body)}\r\n"
    return raw(port, head.encode() + b"\r\n" + body)


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    d = tmp_path_factory.mktemp("view")
    return write_small_h5(d / "small.h5"), d


@pytest.fixture(scope="module")
def server(small):
    """The server the tests below share; after all they sent it, it still
    stops cleanly on SIGTERM with nothing on stderr."""
    path, d = small
    s = Server([path], d)
    yield s
    try:
        assert s.proc.poll() is None, "the shared server died"
        s.proc.send_signal(signal.SIGTERM)
        rc, out, err = s.wait()
        assert rc == 0 and not err, (rc, err)
    finally:
        s.stop()


def test_page_is_served_with_the_token_and_loads_nothing(server):
    status, h, body = server.get(f"/?token={server.token}", token=False)
    assert status == 200
    assert h["content-type"].startswith("text/html")
    assert h["cache-control"] == "no-store" and h["x-content-type-options"] == "nosniff"
    csp = h["content-security-policy"]
    for part in ("default-src 'none'", "connect-src 'self'", "script-src 'unsafe-inline'",
                 "img-src data: blob:"):
        assert part in csp, csp
    page = body.decode()
    assert len(body) == int(h["content-length"]) and "<html" in page
    assert not re.search(r"""(?:src|href|action)\s*=\s*["']?\s*(?:https?:)?//""", page, re.I)
    assert not re.search(r"""url\(\s*["']?\s*(?:https?:)?//|@import""", page, re.I)
    assert not re.search(r"<script[^>]*\ssrc\s*=", page, re.I)
    assert not re.search(r"<link[^>]*\shref\s*=\s*[\"']?(?!data:)", page, re.I)
    # the URL the tool printed is the page
    assert server.url == f"http://127.0.0.1:{server.port}/?token={server.token}"


@pytest.mark.parametrize("how", ["none", "wrong", "empty", "prefix", "longer", "query-wrong"])
def test_requests_without_the_right_token_are_refused(server, how):
    t = server.token
    wrong = ("0" if t[0] != "0" else "1") + t[1:]
    header = {"none": None, "wrong": wrong, "empty": "", "prefix": t[:-1],
              "longer": t + "0", "query-wrong": None}[how]
    target = f"/api/meta?token={wrong}" if how == "query-wrong" else "/api/meta"
    headers = {} if header is None else {"X-Spanscope-Token": header}
    for path in (target, target.replace("/api/meta", "/")):
        status, h, body = server.get(path, token=False, headers=headers)
        assert status == 403, (how, path, status, body)
        assert h["cache-control"] == "no-store"
        assert b"outer" not in body and b"<html" not in body


@pytest.mark.parametrize("host", ["evil.example:{port}", "127.0.0.1:{other}",
                                  "localhost:{other}", "127.0.0.1", "evil.example",
                                  "127.0.0.1:{port}.evil.example", None])
def test_a_foreign_host_is_refused(server, host):
    headers = {"X-Spanscope-Token": server.token}
    if host is not None:
        headers["Host"] = host.format(port=server.port, other=server.port ^ 1)
        status, _, body = request(server.port, "GET", "/api/meta", headers)
    else:  # no Host at all
        status, _, body = raw(server.port, (f"GET /api/meta HTTP/1.1\r\nX-Spanscope-Token: "
                                            f"{server.token}\r\n\r\n").encode())
    assert status == 403, (host, body)


def test_localhost_is_a_fine_host(server):
    status, _, body = request(server.port, "GET", "/api/meta",
                              {"Host": f"localhost:{server.port}",
                               "X-Spanscope-Token": server.token})
    assert status == 200, body


@pytest.mark.parametrize("origin", ["http://evil.example", "null", "http://127.0.0.1:{other}",
                                    "https://127.0.0.1:{port}", "http://127.0.0.1:{port}.evil",
                                    ""])
def test_a_foreign_origin_is_refused(server, origin):
    o = origin.format(port=server.port, other=server.port ^ 1)
    for method, path in (("GET", "/api/meta"), ("POST", "/api/quit")):
        status, _, body = server.get(path, method=method, headers={"Origin": o})
        assert status == 403, (o, method, path, body)
    assert server.proc.poll() is None  # the refused quit did not stop it


@pytest.mark.parametrize("origin", ["http://127.0.0.1:{port}", "http://localhost:{port}"])
def test_the_own_origin_is_fine(server, origin):
    status, _, _ = server.get("/api/meta", headers={"Origin": origin.format(port=server.port)})
    assert status == 200


def test_meta_answers_with_the_header_token(server):
    status, h, body = server.get("/api/meta")
    assert status == 200, body
    assert h["content-type"].startswith("application/json")
    assert h["x-content-type-options"] == "nosniff"
    meta = json.loads(body)
    assert meta["nspans"] == 9
    assert {"outer", "inner"} <= set(meta["names"])
    # and with the query token, which the API does not see as a parameter
    status, _, body2 = server.get(f"/api/meta?token={server.token}", token=False)
    assert status == 200 and json.loads(body2)["nspans"] == 9


def test_unknown_paths_and_methods(server):
    for path in ("/nope", "/index.html", "/api/nope", "/api", "//api/meta"):
        status, h, _ = server.get(path)
        assert status == 404, path
    status, h, _ = server.get("/", method="DELETE")
    assert status == 405 and "GET" in h["allow"]
    status, h, _ = server.get("/api/quit")  # quitting takes a POST
    assert status == 405 and h["allow"] == "POST"
    status, _, _ = server.get("/", method="POST")
    assert status == 405
    assert server.proc.poll() is None


def test_oversized_and_malformed_requests(server):
    port, tok = server.port, server.token
    host = f"Host: {server.host()}\r\nX-Spanscope-Token: {tok}\r\n"
    big_head = (f"GET /api/meta HTTP/1.1\r\n{host}X-Pad: {'a' * 300000}\r\n\r\n").encode()
    status, _, _ = raw(port, big_head)
    assert status == 413
    big_body = f"POST /api/meta HTTP/1.1\r\n{host}Content-Length: 100000000\r\n\r\n".encode()
    status, _, _ = raw(port, big_body)
    assert status == 413
    for bad in (b"GARBAGE\r\n\r\n", b"GET /api/meta HTTP/2.0\r\nHost: x\r\n\r\n",
                f"GET /api/meta HTTP/1.1\r\n{host}Transfer-Encoding: chunked\r\n\r\n".encode(),
                f"GET /api/meta HTTP/1.1\r\n{host}Content-Length: -1\r\n\r\n".encode(),
                f"GET /api/meta HTTP/1.1\r\n{host}Host: evil\r\n\r\n".encode(),
                f"GET /api/\x01meta HTTP/1.1\r\n{host}\r\n".encode(),
                f"GET /api/meta HTTP/1.1\n{host}\r\n".encode()):
        status, _, _ = raw(port, bad)
        assert status == 400, bad
    status, _, _ = server.get("/api/meta")  # and it still answers
    assert status == 200


def test_keep_alive_and_pipelining(server):
    one = (f"GET /api/meta HTTP/1.1\r\nHost: {server.host()}\r\n"
           f"X-Spanscope-Token: {server.token}\r\n\r\n").encode()
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s, \
            s.makefile("rb") as f:
        s.sendall(one)
        assert read_response(f)[0] == 200
        s.sendall(one * 3)  # three at once
        for _ in range(3):
            status, h, body = read_response(f)
            assert status == 200 and json.loads(body)["nspans"] == 9
            assert h["connection"] == "keep-alive"


def test_a_slow_client_blocks_nobody(server):
    """Connections that send half a request, or never read, or are many,
    do not stop another client from being answered at once."""
    slow = []
    try:
        for _ in range(10):
            s = socket.create_connection(("127.0.0.1", server.port), timeout=10)
            s.sendall(f"GET /api/meta HTTP/1.1\r\nHost: {server.host()}\r\n".encode())
            slow.append(s)
        # one that asks for the page many times and reads nothing
        s = socket.create_connection(("127.0.0.1", server.port), timeout=10)
        s.sendall((f"GET /?token={server.token} HTTP/1.1\r\nHost: {server.host()}\r\n\r\n"
                   .encode()) * 50)
        slow.append(s)
        for _ in range(80):  # more than the server keeps open: the idlest go
            slow.append(socket.create_connection(("127.0.0.1", server.port), timeout=10))
        t = time.monotonic()
        status, _, _ = server.get("/api/meta")
        assert status == 200 and time.monotonic() - t < 5
    finally:
        for s in slow:
            s.close()


def check_one_line_failure(args, tmp, code=None):
    p = subprocess.run([str(CLI), "view", *map(str, args), "--index-dir", str(tmp)],
                       capture_output=True, timeout=60)
    err = p.stderr.decode(errors="replace")
    assert p.returncode != 0 and p.returncode < 128, (args, p.returncode, err)
    if code is not None:
        assert p.returncode == code, (args, p.returncode, err)
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("spanscope: view: "), err
    assert not p.stdout.strip(), p.stdout  # no URL: nothing was served
    return lines[0]


def test_hostile_files_fail_with_one_line(tmp_path):
    garbage = tmp_path / "garbage.h5"
    garbage.write_bytes(b"\x89HDF\r\n\x1a\n" + os.urandom(4096))
    noise = tmp_path / "noise.h5"
    noise.write_bytes(os.urandom(100000))
    empty = tmp_path / "empty.h5"
    empty.write_bytes(b"")
    trunc = tmp_path / "trunc.json"
    trunc.write_text('{"traceEvents":[{"name":"a","ph":"X","ts":1,"dur":2,"pid":1,"tid":1},'
                     '{"name":"b","ph":"X","ts":')
    trunc_gz = tmp_path / "trunc.json.gz"
    import gzip
    trunc_gz.write_bytes(gzip.compress(trunc.read_bytes())[:-9])
    pftrace = tmp_path / "noise.pftrace"
    pftrace.write_bytes(os.urandom(5000))
    for f in (garbage, noise, empty, trunc, trunc_gz, pftrace, tmp_path / "missing.h5"):
        check_one_line_failure([f], tmp_path / "idx")


def test_usage_errors(tmp_path, small):
    path, _ = small
    check_one_line_failure([], tmp_path, 2)
    check_one_line_failure([path, "--port", "70000"], tmp_path, 2)
    check_one_line_failure([path, "--port"], tmp_path, 2)
    check_one_line_failure([path, "--bogus"], tmp_path, 2)
    p = subprocess.run([str(CLI), "view", "--help"], capture_output=True, timeout=30)
    assert p.returncode == 0 and b"usage: spanscope view" in p.stdout


def test_a_port_in_use(tmp_path, small):
    path, _ = small
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        line = check_one_line_failure([path, "--port", str(s.getsockname()[1])], tmp_path, 2)
        assert "in use" in line


def test_a_chosen_port(tmp_path, small):
    path, _ = small
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    srv = Server([path], tmp_path, "--port", str(port))
    try:
        assert srv.port == port
    finally:
        srv.stop()


def test_script_names_are_served_as_json_data(tmp_path):
    f = H.write_own_h5(tmp_path / "own.h5")
    ProfileManager._reset()
    srv = Server([f], tmp_path)
    try:
        status, h, body = srv.get("/api/meta")
        assert status == 200
        assert h["content-type"].startswith("application/json")
        assert h["x-content-type-options"] == "nosniff"
        assert "default-src 'none'" in h["content-security-policy"]
        names = json.loads(body)["names"]  # valid JSON, the names as data
        for n in H.TEXT_NAMES:
            assert n in names, n
        # the page never holds a name: it is the same for every file
        status, _, page = srv.get("/")
        assert status == 200 and b"sps-injected-marker" not in page
        assert b"onerror" not in page
        # a search for script text answers JSON too
        status, h, body = srv.get("/api/search?q=%3Cscript%3E")
        assert status == 200 and h["content-type"].startswith("application/json")
        json.loads(body)
    finally:
        srv.stop()


def test_post_quit_stops_the_server(tmp_path, small):
    path, _ = small
    srv = Server([path], tmp_path)
    try:
        status, _, body = srv.get("/api/quit", method="POST")
        assert status == 200 and json.loads(body) == {"ok": True}
        rc, out, err = srv.wait()
        assert rc == 0, err
        assert "stopped" in out and not err
    finally:
        srv.stop()


@pytest.mark.parametrize("sig,group", [(signal.SIGINT, False), (signal.SIGTERM, False),
                                       (signal.SIGINT, True)])
def test_a_signal_stops_the_server(tmp_path, small, sig, group):
    """SIGINT or SIGTERM to the tool, or SIGINT to its whole process group
    (Ctrl-C at a terminal): the server stops, exit status 0."""
    path, _ = small
    srv = Server([path], tmp_path, session=group)
    try:
        # a connection left open does not keep it running
        idle = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
        assert srv.get("/api/meta")[0] == 200
        if group:
            os.killpg(srv.proc.pid, sig)
        else:
            srv.proc.send_signal(sig)
        rc, out, err = srv.wait()
        idle.close()
        assert rc == 0, err
        assert out.splitlines()[-1] == "spanscope view: stopped" and not err
    finally:
        srv.stop()


def test_open_runs_the_browser_without_waiting(tmp_path, small):
    path, _ = small
    seen = tmp_path / "seen"
    browser = tmp_path / "browser.sh"
    browser.write_text(f"#!/bin/sh\necho \"$@\" > {seen}.tmp && mv {seen}.tmp {seen}\n"
                       "sleep 30\n")  # a browser that stays: the tool must not wait
    browser.chmod(0o755)
    env = dict(os.environ, BROWSER=str(browser))
    srv = Server([path], tmp_path, "--open", env=env)
    try:
        for _ in range(100):
            if seen.exists():
                break
            time.sleep(0.1)
        assert seen.read_text().strip() == srv.url
        assert srv.get("/api/meta")[0] == 200
    finally:
        srv.stop()


def test_open_without_a_browser_still_serves(tmp_path, small):
    path, _ = small
    empty = tmp_path / "bin"
    empty.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "BROWSER"}
    env["PATH"] = str(empty)
    srv = Server([path], tmp_path, "--open", env=env)
    try:
        assert srv.get("/api/meta")[0] == 200
        srv.proc.send_signal(signal.SIGTERM)
        rc, _, err = srv.wait()
        assert rc == 0
        assert len(err.splitlines()) == 1 and "--open" in err
    finally:
        srv.stop()


def test_several_files_and_formats(tmp_path, small):
    """The same recording as .h5, .json.gz and .pftrace side by side."""
    path, _ = small
    others = [tmp_path / "small.json.gz", tmp_path / "small.pftrace"]
    for o in others:
        subprocess.run([str(CLI), "convert", str(path), str(o)], check=True, timeout=60,
                       capture_output=True)
    srv = Server([path, *others], tmp_path / "idx")
    try:
        status, _, body = srv.get("/api/meta")
        assert status == 200, body
        meta = json.loads(body)
        assert [f["path"] for f in meta["files"]] == [str(p) for p in [path, *others]]
        assert [f["nspans"] for f in meta["files"]] == [9, 9, 9]
        assert meta["nspans"] == 27 and len(meta["procs"]) >= 3
    finally:
        srv.stop()


KINETO_TRACE = {"schemaVersion": 1, "traceEvents": [
    {"ph": "M", "name": "process_name", "pid": 100, "tid": 0, "args": {"name": "python 100"}},
    {"ph": "M", "name": "process_name", "pid": 0, "tid": 0, "args": {"name": "GPU 0"}},
    {"ph": "M", "name": "thread_name", "pid": 0, "tid": 7, "args": {"name": "stream 7"}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 100, "tid": 100, "ts": 1000,
     "dur": 50},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 100, "tid": 100,
     "ts": 1010, "dur": 10, "args": {"correlation": 5}},
    {"ph": "X", "cat": "kernel", "name": "sgemm_kernel", "pid": 0, "tid": 7, "ts": 1030,
     "dur": 40, "args": {"correlation": 5, "device": 0, "stream": 7}},
    {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD", "pid": 0, "tid": 7, "ts": 1080,
     "dur": 5, "args": {"device": 0, "stream": 7}},
    {"ph": "s", "id": 5, "pid": 100, "tid": 100, "ts": 1010, "cat": "ac2g", "name": "ac2g"},
    {"ph": "f", "id": 5, "pid": 0, "tid": 7, "ts": 1030, "cat": "ac2g", "name": "ac2g",
     "bp": "e"}]}


def test_a_device_trace_shows_its_streams(tmp_path):
    """A torch/kineto trace with GPU activity: the device is a process of
    its own and each stream a track, its kernels and copies spans there."""
    path = tmp_path / "kineto.json"
    path.write_text(json.dumps(KINETO_TRACE))
    srv = Server([path], tmp_path / "idx")
    try:
        status, _, body = srv.get("/api/meta")
        assert status == 200, body
        meta = json.loads(body)
        assert meta["nspans"] == 4
        gpu = [p["id"] for p in meta["procs"] if p["name"] == "GPU 0"]
        assert len(gpu) == 1
        stream = [t for t in meta["threads"] if t["proc"] == gpu[0]]
        assert [t["name"] for t in stream] == ["stream 7"]
        status, _, body = srv.get("/api/search?q=sgemm")
        hits = json.loads(body)["hits"]
        assert [(h["thread"], h["start_ns"], h["dur_ns"]) for h in hits] == \
            [(stream[0]["id"], 30000, 40000)]
        status, _, body = srv.get("/api/search?q=memcpy")
        assert [h["thread"] for h in json.loads(body)["hits"]] == [stream[0]["id"]]
    finally:
        srv.stop()


def test_the_index_is_kept_and_rebuilt_when_asked(tmp_path, small):
    """--index-dir holds the index; the second open reuses it; --rebuild
    builds it again."""
    path, _ = small
    idx = tmp_path / "idx"
    built = []
    for args in ((), (), ("--rebuild",)):
        srv = Server([path], idx, *args)
        try:
            status, _, body = srv.get("/api/meta")
            assert status == 200, body
            f = json.loads(body)["files"][0]
            assert os.path.dirname(f["index"]["path"]) == str(idx)
            assert os.path.getsize(f["index"]["path"]) == f["index"]["bytes"]
            built.append(f["index"]["built"])
        finally:
            srv.stop()
    assert built == [True, False, True]


def test_random_and_mutated_requests_break_nothing(server):
    """Random bytes and valid requests with bytes changed, cut or
    repeated: each gets an answer or a closed connection, never a hang,
    and the server keeps answering."""
    import random
    rnd = random.Random(36)
    valid = (f"GET /api/meta?token={server.token} HTTP/1.1\r\nHost: {server.host()}\r\n"
             f"Origin: http://127.0.0.1:{server.port}\r\nConnection: keep-alive\r\n\r\n").encode()
    for i in range(300):
        kind = i % 4
        if kind == 0:
            data = bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, 400))) + b"\r\n\r\n"
        elif kind == 1:
            b = bytearray(valid)
            for _ in range(rnd.randrange(1, 6)):
                b[rnd.randrange(len(b))] = rnd.randrange(256)
            data = bytes(b)
        elif kind == 2:
            cut = rnd.randrange(len(valid))
            data = valid[:cut] + valid[cut:][::-1]
        else:
            data = valid * rnd.randrange(2, 5) + valid[:rnd.randrange(len(valid))]
        with socket.create_connection(("127.0.0.1", server.port), timeout=15) as s:
            s.sendall(data)
            s.shutdown(socket.SHUT_WR)
            with s.makefile("rb") as f:
                while True:  # every answer until the server closes
                    try:
                        status, _, _ = read_response(f)
                    except ConnectionResetError:
                        break
                    if status is None:
                        break
                    assert status in (200, 400, 403, 404, 405, 413), (data, status)
    assert server.get("/api/meta")[0] == 200 and server.proc.poll() is None


def test_a_request_that_never_ends_is_cut_off(server):
    """A client that sends half a request and then nothing (slowloris)
    loses its connection after the request time limit (10 s), while others
    are answered meanwhile."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as s:
        s.sendall(f"GET /api/meta HTTP/1.1\r\nHost: {server.host()}\r\n".encode())
        t = time.monotonic()
        assert server.get("/api/meta")[0] == 200
        try:
            closed = s.recv(100) == b""
        except ConnectionResetError:
            closed = True
        assert closed and 8 < time.monotonic() - t < 20
