"""The frames the pytest suites of dot_plugin write and read back, as
dot-core would: "Content-Length: N\r\n\r\n" and the body, strictly framed."""
import json


def frame(body):
    """A frame of `body`: a dict or list as compact JSON, str as UTF-8, bytes as is."""
    if isinstance(body, (dict, list)):
        body = json.dumps(body, separators=(",", ":")).encode()
    elif isinstance(body, str):
        body = body.encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def frames_of(data):
    """Every frame in `data`, strictly framed, as parsed JSON."""
    out = []
    while data:
        header, sep, rest = data.partition(b"\r\n\r\n")
        assert sep and header.startswith(b"Content-Length: ")
        n = int(header[len(b"Content-Length: "):])
        out.append(json.loads(rest[:n].decode("utf-8")))
        data = rest[n:]
    return out


def request(rid, method, params):
    return {"id": rid, "jsonrpc": "2.0", "method": method, "params": params}
