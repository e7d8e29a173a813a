"""The eval reports under FARMHAND_HOME/eval/ over HTTP: listed behind the API key, read by
a signed link without it, served under a policy that lets nothing run; and the attacks on
the name a client sends (path traversal, encoded, absolute, a symlink out of the folder, a
forged or old link, a path that only starts like a report's) read nothing outside the
folder."""

from __future__ import annotations

import http.client
import re
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from tests.support.live import LiveServer, scripted_config

from farmhand.assembly import create_app
from farmhand.errors import AuthError, RequestError
from farmhand.eval.html_report import keep_report
from farmhand.providers.scripted import ScriptedProvider
from farmhand.service.eval_reports import EvalReports
from farmhand.service.state import ServiceState

KEY = {"Authorization": "Bearer sekret"}
SECRET = "<title>not a report</title>the operator's secret"
PAGE = "<title>farmhand eval: builtin</title><style>p { color: red; }</style><p>ok</p>"


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[LiveServer, ServiceState, Path]]:
    home = tmp_path / "home"
    kept = keep_report(PAGE, "builtin", home=home)
    (tmp_path / "secret.html").write_text(SECRET)
    (home / "eval" / "escape.html").symlink_to(tmp_path / "secret.html")
    app = create_app(
        scripted_config(),
        home=home,
        provider_factory=lambda _: ScriptedProvider(),
        api_keys=["sekret"],
    )
    with LiveServer(app) as server:
        yield server, app.state.farmhand, kept


def test_the_list_needs_the_key_and_its_links_open_the_report_without_it(
    served: tuple[LiveServer, ServiceState, Path],
) -> None:
    server, _, kept = served
    assert httpx.get(server.url + "/api/eval/reports").status_code == 401
    listed = httpx.get(server.url + "/api/eval/reports", headers=KEY).json()
    assert listed["folder"] == str(kept.parent)
    [report] = listed["reports"]  # the symlink out of the folder is not listed
    assert report["name"] == kept.name and report["title"] == "farmhand eval: builtin"

    page = httpx.get(server.url + report["url"])  # no key: the signature stands in
    assert page.status_code == 200 and page.text == PAGE
    assert page.headers["content-type"].startswith("text/html")
    policy = page.headers["content-security-policy"]
    assert policy.startswith("default-src 'none'; style-src 'sha256-") and "sandbox" in policy
    assert "unsafe" not in policy and page.headers["x-content-type-options"] == "nosniff"


def test_a_forged_or_old_link_is_refused(served: tuple[LiveServer, ServiceState, Path]) -> None:
    server, state, kept = served
    [report] = httpx.get(server.url + "/api/eval/reports", headers=KEY).json()["reports"]
    # Change the signature's first digit to another one: a forgery must differ from the real link.
    forged = re.sub(r"signature=(\w)", lambda m: "signature=" + "10"[m[1] == "1"], report["url"])
    assert forged != report["url"]
    odd = [f"/eval/reports/{kept.name}?expires={e}&signature=0" for e in ["9" * 5000, "²"]]
    for url in [
        forged,
        f"/eval/reports/{kept.name}",
        report["url"].replace("expires=", "x="),
        *odd,
    ]:
        reply = httpx.get(server.url + url)
        assert reply.status_code == 401 and "not one the server signed" in reply.text, url
    [old] = state.eval_reports().listing(now=time.time() - 7200)
    url = f"/eval/reports/{kept.name}?expires={old['expires']}&signature={old['signature']}"
    reply = httpx.get(server.url + url)
    assert reply.status_code == 401 and "has expired" in reply.text


@pytest.mark.parametrize(
    "name",
    [
        "../secret.html",
        "..%2Fsecret.html",
        "%2e%2e%2fsecret.html",
        "..%5Csecret.html",
        "%2Fetc%2Fpasswd",
        "escape.html",  # a symlink out of the folder
        ".hidden.html",
        "..html",
    ],
)
def test_traversal_reads_nothing_outside_the_folder_even_when_signed(
    served: tuple[LiveServer, ServiceState, Path], name: str
) -> None:
    server, state, _ = served
    reports = state.eval_reports()
    raw = name.replace("%2F", "/").replace("%2f", "/").replace("%2e", ".").replace("%5C", "\\")
    expires = int(time.time()) + 60
    signature = reports.signature(raw, expires)  # as if the key had leaked
    reply = httpx.get(f"{server.url}/eval/reports/{name}?expires={expires}&signature={signature}")
    # 401 where the client itself resolved the `..` and asked for a path that needs the key
    assert reply.status_code in (400, 401, 404), reply.text
    assert "operator's secret" not in reply.text and "root:" not in reply.text


def test_a_path_that_only_starts_like_a_reports_gets_no_pass_through_the_key(
    served: tuple[LiveServer, ServiceState, Path],
) -> None:
    server, _, _ = served
    host = urlsplit(server.url)
    connection = http.client.HTTPConnection(host.hostname or "", host.port)
    connection.request("GET", "/eval/reports/../../api/mcp/servers")  # sent as written
    reply = connection.getresponse()
    assert reply.status == 401, reply.read()
    connection.close()


def test_the_folder_check_itself(tmp_path: Path) -> None:
    reports = EvalReports(tmp_path / "home", b"k" * 32)
    kept = keep_report(PAGE, "builtin", home=tmp_path / "home")
    (tmp_path / "secret.html").write_text(SECRET)
    (kept.parent / "escape.html").symlink_to(tmp_path / "secret.html")

    def read(name: str) -> bytes:
        expires = int(time.time()) + 60
        return reports.read(name, str(expires), reports.signature(name, expires)).body

    assert read(kept.name) == PAGE.encode()
    for name in ["../secret.html", "/tmp/secret.html", "..\\secret.html", "a/../../secret.html"]:
        with pytest.raises(RequestError, match="not the name of an eval report"):
            read(name)
    with pytest.raises(RequestError, match=r"no eval report is named 'escape\.html'"):
        read("escape.html")
    with pytest.raises(AuthError):
        reports.read(kept.name, "1", "0" * 64)
    assert [r["name"] for r in reports.listing()] == [kept.name]
